"""Desktop integration: shipped files, their validity with the real tools, install-desktop."""

from __future__ import annotations

import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from configparser import ConfigParser
from pathlib import Path

import pytest

from som_studio import resources as res
from som_studio.cli import main
from som_studio.commands import install_desktop as inst


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def desktop_entry(path: Path) -> dict[str, str]:
    cp = ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # keys are case-sensitive
    cp.read(path, encoding="utf-8")
    return dict(cp["Desktop Entry"])


def test_icons_are_shipped_at_every_size():
    root = ET.parse(res.icon_svg()).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox") == "0 0 256 256"
    for size in res.ICON_SIZES:
        assert png_size(res.icon_png(size)) == (size, size)
    with pytest.raises(ValueError, match="no 20px icon"):
        res.icon_png(20)


def test_one_id_everywhere():
    entry = desktop_entry(res.desktop_entry())
    assert entry["Icon"] == res.APP_ID and entry["Exec"] == "som-studio"
    meta = ET.parse(res.metainfo()).getroot()
    assert meta.findtext("id") == res.APP_ID
    assert meta.findtext("launchable[@type='desktop-id']") == res.DESKTOP_FILE
    assert meta.findtext("provides/binary") == "som-studio"
    assert res.desktop_entry().name == res.DESKTOP_FILE and res.metainfo().name == res.METAINFO_FILE


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pkg = {"desktop-file-validate": "desktop-file-utils", "appstreamcli": "appstream"}[name]
        pytest.skip(f"{name} is not installed (Debian/Ubuntu package {pkg}); .ci/run installs it when it can")
    return path


def _validate_desktop(path: Path) -> None:
    proc = subprocess.run([_tool("desktop-file-validate"), str(path)], capture_output=True, text=True, timeout=60)
    # It prints hints as well as errors; only errors fail it (exit status 1).
    assert proc.returncode == 0 and "error:" not in proc.stdout, proc.stdout + proc.stderr


def test_desktop_entry_validates():
    _validate_desktop(res.desktop_entry())


def test_metainfo_validates():
    proc = subprocess.run(
        [_tool("appstreamcli"), "validate", "--no-net", str(res.metainfo())], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "E:" not in proc.stdout and "W:" not in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    ("arg", "quoted"),
    [
        ("/home/me/.venv/bin/som-studio", "/home/me/.venv/bin/som-studio"),
        ("/home/me/my apps/bin/som-studio", '"/home/me/my apps/bin/som-studio"'),
        ("/opt/$x/100%/som-studio", '"/opt/\\$x/100%%/som-studio"'),
        ('/a"b/som-studio', '"/a\\"b/som-studio"'),
    ],
)
def test_exec_quoting_follows_the_spec(arg, quoted):
    assert inst.exec_quote(arg) == quoted


def test_installed_entry_with_an_awkward_path_validates(tmp_path):
    text = inst.desktop_text(res.desktop_entry().read_text(), ["/home/me/my apps/$v/bin/som-studio"])
    path = tmp_path / res.DESKTOP_FILE
    path.write_text(text)
    entry = desktop_entry(path)
    assert entry["Exec"] == '"/home/me/my apps/\\\\$v/bin/som-studio"'
    assert entry["TryExec"] == "/home/me/my apps/$v/bin/som-studio"
    # `python -m som_studio` has no program for TryExec to test: the key goes.
    other = inst.desktop_text(res.desktop_entry().read_text(), ["/usr/bin/python3", "-m", "som_studio"])
    assert "Exec=/usr/bin/python3 -m som_studio" in other and "TryExec" not in other
    _validate_desktop(path)


def test_data_dir_follows_xdg():
    assert inst.data_dir(None, {"XDG_DATA_HOME": "/x/data", "HOME": "/h"}) == Path("/x/data")
    assert inst.data_dir(None, {"XDG_DATA_HOME": "relative", "HOME": "/h"}) == Path("/h/.local/share")
    assert inst.data_dir(None, {"HOME": "/h"}) == Path("/h/.local/share")
    assert inst.data_dir("/usr/local", {"XDG_DATA_HOME": "/x"}) == Path("/usr/local/share")


def installed(share: Path) -> list[Path]:
    return sorted(p for p in share.rglob("*") if p.is_file() and not p.name.endswith(".cache"))


def test_install_desktop_into_the_xdg_data_home(tmp_path, monkeypatch, capsys):
    share = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(share))
    assert main(["install-desktop", "--dry-run"]) == 0
    assert not share.exists()
    assert "would write" in capsys.readouterr().out

    assert main(["install-desktop"]) == 0
    entry_path = share / "applications" / res.DESKTOP_FILE
    entry = desktop_entry(entry_path)
    argv = inst.launcher_argv()
    if len(argv) == 1:  # an installed som-studio: the entry names it, and TryExec tests it
        launcher = Path(entry["TryExec"])
        assert launcher.is_absolute() and launcher.name == "som-studio" and entry["Exec"] == str(launcher)
    else:  # run from a source tree (no launcher script): `python -m som_studio`, which TryExec cannot test
        assert argv[1:] == ["-m", "som_studio"] and "TryExec" not in entry and entry["Exec"] == inst.exec_line(argv)
    assert (share / "metainfo" / res.METAINFO_FILE).read_bytes() == res.metainfo().read_bytes()
    svg = share / "icons/hicolor/scalable/apps" / f"{res.APP_ID}.svg"
    assert svg.read_bytes() == res.icon_svg().read_bytes()
    for size in res.ICON_SIZES:
        assert png_size(share / f"icons/hicolor/{size}x{size}/apps/{res.APP_ID}.png") == (size, size)
    assert len(installed(share)) == 3 + len(res.ICON_SIZES)
    installed_entry = entry_path.read_text()

    # Again: nothing changes.
    capsys.readouterr()
    assert main(["install-desktop"]) == 0
    assert capsys.readouterr().out.count("unchanged") == 3 + len(res.ICON_SIZES)

    assert main(["install-desktop", "--uninstall"]) == 0
    assert installed(share) == []
    (tmp_path / res.DESKTOP_FILE).write_text(installed_entry)
    _validate_desktop(tmp_path / res.DESKTOP_FILE)  # last: it skips where the tool is missing


def test_install_desktop_refuses_to_replace_other_content(tmp_path, monkeypatch, capsys):
    share = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(share))
    theirs = share / "metainfo" / res.METAINFO_FILE
    theirs.parent.mkdir(parents=True)
    theirs.write_text("not ours")
    assert main(["install-desktop"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("som-studio install-desktop: error: ") and "use --force" in err and str(theirs) in err
    assert installed(share) == [theirs]  # checked before anything was written
    assert main(["install-desktop", "--force"]) == 0
    assert theirs.read_bytes() == res.metainfo().read_bytes()


def test_install_desktop_prefix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "unused"))
    assert main(["install-desktop", "--prefix", str(tmp_path / "usr")]) == 0
    assert (tmp_path / "usr/share/applications" / res.DESKTOP_FILE).is_file()
    assert not (tmp_path / "unused").exists()
    assert "not in XDG_DATA_DIRS" in capsys.readouterr().err
