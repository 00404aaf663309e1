"""Mental-poker deck: keys, masking, proven shuffles, reveal tokens, transfers and the audit."""
