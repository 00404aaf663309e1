"""The live check: judge transcripts of real matches played over the network.

``python -m interop.live [--adapter CMD] FILE...`` sends every record of each transcript file
(the format of PROTOCOL.md section 21) to the adapter as one case that must be ``valid``, and
exits non-zero if any is not. A file whose header names another version than the table of its
record 0 is refused before the adapter sees it (PROTOCOL.md 20: the header byte is not
signed). Used after a client under test has played a match at a table hosted by this project
(or the other way round): the host's transcript is judged by the client's adapter, the
client's transcript by this project's adapter.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from interop.channel import ChannelError, read_transcript_file, table_version
from interop.runner import DEFAULT_ADAPTER, Adapter


def check(paths: list[Path], command: str = DEFAULT_ADAPTER, timeout_s: float = 600.0,
          out=sys.stdout) -> int:
    """Judge each transcript; return the number that are not valid."""
    bad = 0
    adapter = Adapter(command, timeout_s)
    try:
        for path in paths:
            try:
                header, records = read_transcript_file(path)
            except (OSError, ValueError) as exc:
                print(f"UNREADABLE {path}: {exc}", file=out)
                bad += 1
                continue
            table = table_version(records[0]) if records else None
            if isinstance(table, int) and table != header:  # (the header byte is not signed)
                print(f"UNREADABLE {path}: its header names protocol version {header} but its "
                      f"table (record 0) is of version {table}", file=out)
                bad += 1
                continue
            answer = adapter.ask({"id": f"live:{path}", "input": {"records": records}})
            if answer.get("result") == "valid":
                print(f"VALID      {path}: {len(records)} records", file=out)
            else:
                bad += 1
                print(f"{str(answer.get('result')).upper():10} {path}: {answer.get('code')} "
                      f"seat {answer.get('seat')} record {answer.get('index')}: "
                      f"{answer.get('detail')}", file=out)
    except ChannelError as exc:
        print(f"adapter failed: {exc}", file=out)
        return max(bad, 1)
    finally:
        adapter.close()
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.live", description=__doc__)
    parser.add_argument("files", nargs="+", type=Path, help="transcript files")
    parser.add_argument("--adapter", default=DEFAULT_ADAPTER, help="adapter command line")
    args = parser.parse_args(argv)
    return 1 if check(args.files, args.adapter) else 0


if __name__ == "__main__":
    raise SystemExit(main())
