"""``dernier relay --record``: a new file, mode 0600, never an existing file or through a
symbolic link; a bad path is a clear error, not a traceback."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from dernier_p2p.cli.main import main
from dernier_p2p.net.relay import open_record


def test_the_record_is_a_new_private_file_never_a_link_or_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "record.bin"
    with open_record(path) as f:
        f.write(b"x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        open_record(path)
    link = tmp_path / "link.bin"
    link.symlink_to(tmp_path / "elsewhere.bin")  # dangling: would be created through
    with pytest.raises(FileExistsError):
        open_record(link)
    assert not (tmp_path / "elsewhere.bin").exists()


def test_relay_record_refuses_a_link_an_existing_file_or_a_bad_folder_without_a_traceback(
    tmp_path: Path,
) -> None:
    link = tmp_path / "link.bin"
    link.symlink_to(tmp_path / "elsewhere.bin")
    existing = tmp_path / "old.bin"
    existing.write_bytes(b"keep")
    for path, words in ((link, "already exists"), (existing, "already exists"),
                        (tmp_path / "no" / "such.bin", "cannot create")):
        result = CliRunner().invoke(main, ["relay", "--bind", "256.0.0.0", "--record", str(path)])
        assert result.exit_code == 2, result.output
        assert words in result.output and "--record" in result.output
        assert "Traceback" not in result.output
    assert existing.read_bytes() == b"keep"
    assert not (tmp_path / "elsewhere.bin").exists()
