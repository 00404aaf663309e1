"""A stand-in adapter for the runner's own tests: answers by a fixed policy (argv[1])."""

import sys
import time

from interop.channel import pack, read_message, write_message


def main() -> None:
    mode = sys.argv[1]
    count = 0
    while (case := read_message(sys.stdin.buffer)) is not None:
        count += 1
        if mode == "crash" and count == 2:
            sys.exit(3)
        if mode == "unimplemented":
            answer = {"id": case["id"], "result": "unimplemented", "code": None}
        elif mode in ("valid", "crash"):
            answer = {"id": case["id"], "result": "valid", "code": None}
        elif mode == "wrong-id":
            answer = {"id": "nope", "result": "valid", "code": None}
        elif mode == "partial":  # half an answer, then silence
            whole = pack({"id": case["id"], "result": "valid", "code": None})
            sys.stdout.buffer.write(whole[: len(whole) // 2])
            sys.stdout.buffer.flush()
            time.sleep(60)
            return
        elif mode == "escapes":  # a detail that would clear the screen and retitle it
            answer = {"id": case["id"], "result": "unimplemented", "code": None,
                      "detail": "\x1b[2J\x1b]0;owned\x07\rdone"}
        else:
            answer = {"id": case["id"], "result": "invalid", "code": "MALFORMED"}
        write_message(sys.stdout.buffer, answer)


if __name__ == "__main__":
    main()
