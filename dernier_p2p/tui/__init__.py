"""The full-screen live table (Textual), with the table's trio code running as a guest of
Textual's asyncio loop (:mod:`.guest`)."""
