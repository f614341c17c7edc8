"""A config file saved with a UTF-8 byte-order mark (Windows Notepad's "UTF-8" until 2019, and
PowerShell's Out-File) was refused as "Invalid statement (at line 1, column 1)": an error the
operator cannot see in the file. The mark is not part of the text; the file is read."""

from __future__ import annotations

from pathlib import Path

from fairfetch.config import load_settings


def test_config_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    conf = tmp_path / "bom.toml"
    conf.write_bytes(b"\xef\xbb\xbf[fairfetch]\r\nport = 9000\r\nhost = \"127.0.0.2\"\r\n")
    settings = load_settings(conf, environ={})
    assert (settings.port, settings.host) == (9000, "127.0.0.2")
