"""Sans-IO session protocol: messages in, messages out."""
