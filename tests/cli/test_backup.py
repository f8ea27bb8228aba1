"""`companion backup` and `companion restore` on real files: a real Table plays games into a real
SQLite log (WAL mode, rows still in the WAL), the commands run as their own processes as they
would beside the service, and the restored games are compared row by row with the originals."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from companion.table import Table

ROOT = Path(__file__).resolve().parents[2]
NEW = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}
NEW_2 = {"type": "new_game", "game": "exact21", "sides": [{"name": "Cleo"}, {"name": "Dan"}]}
DICE_A = {"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}}
DICE_B = {"type": "dice", "side": "B", "values": {"blue": 6, "red": 4, "green": 3, "yellow": 1}}
DICE_C = {"type": "dice", "side": "Cleo", "values": {"blue": 1, "red": 2, "green": 6, "yellow": 4}}
DICE_D = {"type": "dice", "side": "Dan", "values": {"blue": 5, "red": 3, "green": 2, "yellow": 1}}
MEMBERS = {"manifest.json", "table.sqlite", "table.json", "colours.json", "companion.toml"}


def companion(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def write_config(path: Path, data_dir: Path, pin: str) -> Path:
    path.write_text(f'[server]\npin = "{pin}"\n\n[data]\ndir = "{data_dir}"\n', encoding="utf-8")
    return path


def play(data: Path) -> Table:
    """Two games through the table's API (undo, a new game, a resume), the last rows only in the
    WAL; the calibration files beside the log, as the calibrate commands write them."""
    table = Table(data / "table.sqlite")
    table.start(NEW, source="phone")
    table.apply(DICE_A, source="camera")
    table.apply(DICE_B, source="camera")
    table.apply({"type": "throw", "side": "A", "cup": "yellow"}, source="button")
    table.apply({"type": "throw", "side": "B", "cup": "blue"}, source="phone")
    table.undo(source="phone")
    table.start(NEW_2, source="phone")
    table.apply(DICE_C, source="camera")
    table.apply(DICE_D, source="camera")
    table.apply({"type": "throw", "side": "Cleo", "cup": "green"}, source="camera")
    table.resume(1, source="phone")  # a quiet moment: checkpoint and second copy; what follows is in the WAL
    table.apply({"type": "throw", "side": "B", "cup": "red"}, source="button")
    table.apply({"type": "throw", "side": "A", "cup": "blue"}, source="button")
    shutil.copyfile(ROOT / "calibration" / "table.example.json", data / "table.json")
    shutil.copyfile(ROOT / "models" / "dice-colours.json", data / "colours.json")
    return table


def every_game(table: Table) -> dict[int, list]:
    return {g["id"]: table.log.events(g["id"]) for g in table.games()}


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name.removeprefix("companion-backup/"): tar.extractfile(m).read() for m in tar if m.isfile()}


def pack(path: Path, contents: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in contents.items():
            info = tarfile.TarInfo(f"companion-backup/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def rows_of(db_file: Path) -> dict[int, list]:
    """Every game's rows of a log file, read as they are (a Table would write beside it)."""
    db = sqlite3.connect(f"{db_file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT game_id, body FROM events ORDER BY game_id, seq").fetchall()
    finally:
        db.close()
    games: dict[int, list] = {}
    for game_id, body in rows:
        games.setdefault(game_id, []).append(json.loads(body))
    return games


def events_in(db_file: Path) -> int:
    db = sqlite3.connect(db_file)
    try:
        return db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    finally:
        db.close()


def test_a_backup_taken_while_serving_holds_the_rows_still_in_the_wal_and_restores_every_game(tmp_path):
    data = tmp_path / "data"
    config = write_config(tmp_path / "companion.toml", data, "2468")
    table = play(data)
    try:
        # the rows since the resume are in the WAL only: a plain copy of table.sqlite lacks them
        assert Path(f"{data}/table.sqlite-wal").stat().st_size > 0
        shutil.copyfile(data / "table.sqlite", tmp_path / "plain-copy.sqlite")
        stored = sum(len(rows) for rows in every_game(table).values())
        assert events_in(tmp_path / "plain-copy.sqlite") < stored

        before, games, state = every_game(table), table.games(), table.state()
        out = companion("backup", "--config", config, "--out", tmp_path / "b.tar.gz", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "2 games, 13 events" in out.stdout and stored == 13
        # the service was not disturbed: it goes on storing
        table.apply({"type": "throw", "side": "B", "cup": "green"}, source="button")
        assert table.log.events(1)[-1]["cup"] == "green"
    finally:
        table.close()

    archive = tmp_path / "b.tar.gz"
    assert archive.stat().st_mode & 0o777 == 0o600  # the configuration may hold the PIN
    inside = members(archive)
    assert set(inside) == MEMBERS
    manifest = json.loads(inside["manifest.json"])
    assert manifest["format"] == "companion-backup" and manifest["companion"]
    assert manifest["log"]["games"] == 2 and manifest["log"]["events"] == 13
    assert manifest["log"]["events_by_game"] == {str(g): len(rows) for g, rows in before.items()}
    assert inside["companion.toml"] == config.read_bytes()
    assert inside["table.json"] == (data / "table.json").read_bytes()
    for name, meta in manifest["files"].items():
        assert hashlib.sha256(inside[name]).hexdigest() == meta["sha256"]
    assert manifest["files"]["table.sqlite"]["from"] == str((data / "table.sqlite").resolve())

    # into an empty data directory, from a folder with no companion.toml: the defaults' places
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    empty = tmp_path / "empty"
    out = companion("restore", archive, "--data-dir", empty, cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    assert "2 games, 13 events" in out.stdout
    assert "companion.toml was not put in place" in out.stdout  # no configuration in use there
    assert "kept what it replaced" not in out.stdout  # nothing was there to replace
    assert (empty / "table.json").read_bytes() == (data / "table.json").read_bytes()
    assert (empty / "colours.json").read_bytes() == (data / "colours.json").read_bytes()
    restored = Table(empty / "table.sqlite")
    try:
        assert every_game(restored) == before  # every row: type, body, source, time
        assert restored.games() == games
        assert {k: v for k, v in restored.state().items() if k != "version"} == \
            {k: v for k, v in state.items() if k != "version"}
        assert restored.notices == [] and restored.alerts == []
    finally:
        restored.close()


def test_a_backup_taken_during_a_stream_of_writes_is_one_consistent_moment(tmp_path):
    data = tmp_path / "data"
    table = play(data)
    stop = threading.Event()
    failed: list[BaseException] = []

    def writer() -> None:  # the service stores a throw and its undo, again and again
        try:
            while not stop.is_set():
                table.apply({"type": "throw", "side": "B", "cup": "green"}, source="button")
                table.undo(source="phone")
        except BaseException as err:  # the test fails on it below
            failed.append(err)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        out = companion("backup", "--data-dir", data, "--out", tmp_path, cwd=tmp_path)
    finally:
        stop.set()
        thread.join()
    try:
        assert out.returncode == 0, out.stderr
        assert not failed
        final = every_game(table)
    finally:
        table.close()
    (archive,) = tmp_path.glob("companion-backup-*.tar.gz")
    assert archive.name in out.stdout
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "table.sqlite").write_bytes(members(archive)["table.sqlite"])
    db = sqlite3.connect(tmp_path / "x" / "table.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # one file, no WAL beside it
        rows = db.execute("SELECT game_id, seq, body FROM events ORDER BY game_id, seq").fetchall()
    finally:
        db.close()
    for game_id, events in final.items():
        copied = [json.loads(body) for g, _, body in rows if g == game_id]
        assert copied == events[:len(copied)]  # a moment of the log: every row before it, none after
        assert [seq for g, seq, _ in rows if g == game_id] == list(range(1, len(copied) + 1))
    manifest = json.loads(members(archive)["manifest.json"])
    assert manifest["log"]["events"] == len(rows)


def test_a_restore_keeps_what_it_replaces_aside_and_the_old_copy_is_not_merged_back(tmp_path):
    data = tmp_path / "data"
    config = write_config(tmp_path / "companion.toml", data, "2468")
    table = play(data)
    backed_up = every_game(table)
    table.close()
    assert companion("backup", "--config", config, "--out", tmp_path / "b.tar.gz", cwd=tmp_path).returncode == 0

    # another table, in use since: its own game, second copy, journal, calibration and configuration
    target = tmp_path / "pi"
    other = Table(target / "table.sqlite")
    other.start(NEW_2, source="phone")
    other.apply(DICE_C, source="camera")
    other.apply(DICE_D, source="camera")
    other_rows = every_game(other)
    other.close()
    (target / "table.json").write_text('{"old": true}\n', encoding="utf-8")
    target_config = write_config(tmp_path / "pi.toml", target, "1357")
    old = files(target)
    old_config = target_config.read_bytes()
    assert {"table.copy.sqlite", "table.copy.jsonl"} <= set(old)

    out = companion("restore", tmp_path / "b.tar.gz", "--config", target_config, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    kept = sorted(p.name for p in target.glob("*.before-restore-*"))
    stamp = kept[0].split(".before-restore-")[1]
    assert kept == sorted(f"{n}.before-restore-{stamp}" for n in
                          ("table.sqlite", "table.copy.sqlite", "table.copy.jsonl", "table.json"))
    for name in kept:
        assert (target / name).read_bytes() == old[name.split(".before-restore-")[0]]
        assert str(target / name) in out.stdout
    assert Path(f"{target_config}.before-restore-{stamp}").read_bytes() == old_config
    assert target_config.read_bytes() == config.read_bytes()  # the backup's configuration is in place
    assert (target / "table.json").read_bytes() == (data / "table.json").read_bytes()
    assert (target / "colours.json").read_bytes() == (data / "colours.json").read_bytes()
    # it names the data directory of the machine it came from: said, not silently left
    assert f"note: the restored {target_config} reads the game log from {data / 'table.sqlite'}" in out.stdout

    # the old second copy was put aside with its log: its game is not put back into the restored one
    restored = Table(target / "table.sqlite")
    try:
        assert every_game(restored) == backed_up
        assert restored.alerts == []
    finally:
        restored.close()
    # the log kept aside is still the old table, readable as it was
    assert rows_of(target / f"table.sqlite.before-restore-{stamp}") == other_rows

    # a second restore at once keeps the first one's files as they are (the restored configuration
    # names the first machine's data directory: --data-dir keeps this one)
    first = files(target)
    out = companion("restore", tmp_path / "b.tar.gz", "--config", target_config, "--data-dir", target, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    after = files(target)
    assert all(after[name] == first[name] for name in first if ".before-restore-" in name)
    assert len([n for n in after if n.startswith("table.json.before-restore-")]) == 2


def test_a_restore_refuses_while_a_companion_has_the_log_open(tmp_path):
    data = tmp_path / "data"
    table = play(data)
    table.close()
    assert companion("backup", "--data-dir", data, "--out", tmp_path / "b.tar.gz", cwd=tmp_path).returncode == 0
    serving = Table(data / "table.sqlite")
    try:
        before = files(data)
        out = companion("restore", tmp_path / "b.tar.gz", "--data-dir", data, cwd=tmp_path)
        assert out.returncode == 2
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
        assert "is using" in out.stderr and "stop it first" in out.stderr and "nothing was changed" in out.stderr
        assert files(data) == before
    finally:
        serving.close()


@pytest.fixture(scope="module")
def good_backup(tmp_path_factory) -> dict[str, bytes]:
    home = tmp_path_factory.mktemp("good")
    table = play(home / "data")
    table.close()
    config = write_config(home / "companion.toml", home / "data", "2468")
    out = companion("backup", "--config", config, "--out", home / "b.tar.gz", cwd=home)
    assert out.returncode == 0, out.stderr
    return {"archive": (home / "b.tar.gz").read_bytes(), **members(home / "b.tar.gz")}


def with_manifest(inside: dict[str, bytes], change) -> dict[str, bytes]:
    manifest = json.loads(inside["manifest.json"])
    change(manifest)
    for name, meta in manifest["files"].items():
        if name in inside:
            meta["bytes"], meta["sha256"] = len(inside[name]), hashlib.sha256(inside[name]).hexdigest()
    return {**inside, "manifest.json": json.dumps(manifest).encode()}


def damaged_log(log: bytes, tmp: Path) -> bytes:
    """The log with a NULL in a NOT NULL column: a file SQLite opens and reads, whose integrity
    check fails (the schema relaxed for the write, then put back)."""
    path = tmp / "damaged.sqlite"
    path.write_bytes(log)

    def schema(old: str, new: str) -> None:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA writable_schema=ON")
        db.execute("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = 'events'", (old, new))
        db.close()

    schema("type TEXT NOT NULL,", "type TEXT,")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("UPDATE events SET type = NULL WHERE seq = 2")
    db.close()
    schema("type TEXT,", "type TEXT NOT NULL,")
    return path.read_bytes()


def make_damaged(kind: str, good: dict[str, bytes], tmp: Path) -> Path:
    path = tmp / "damaged.tar.gz"
    archive = good["archive"]
    inside = {k: v for k, v in good.items() if k != "archive"}
    if kind == "cut in half":
        path.write_bytes(archive[: len(archive) // 2])
    elif kind == "cut at its last bytes":  # the tar inside is whole, the gzip stream is not
        path.write_bytes(archive[:-4])
    elif kind == "a byte changed":
        damaged = bytearray(archive)
        damaged[len(damaged) // 3] ^= 0xFF
        path.write_bytes(bytes(damaged))
    elif kind == "not gzip":
        path.write_text("companion.toml\n[server]\n", encoding="utf-8")
    elif kind == "a plain tar":
        with tarfile.open(path, "w") as tar:
            tar.add(ROOT / "README.md", "README.md")
    elif kind == "another tar.gz":
        pack(path, {"notes.txt": b"hello"})
    elif kind == "no manifest":
        pack(path, {k: v for k, v in inside.items() if k != "manifest.json"})
    elif kind == "a file not its manifest's":
        pack(path, {**inside, "table.json": b'{"edited": true}\n'})
    elif kind == "the log fails SQLite's integrity check":
        pack(path, with_manifest({**inside, "table.sqlite": damaged_log(inside["table.sqlite"], tmp)}, lambda m: m))
    elif kind == "not an SQLite file":
        pack(path, with_manifest({**inside, "table.sqlite": b"SQLite format 3\x00" + b"\x00" * 300}, lambda m: m))
    elif kind == "counts that are not the log's":
        pack(path, with_manifest(inside, lambda m: m["log"].update(events=m["log"]["events"] + 1)))
    elif kind == "a newer backup":
        pack(path, with_manifest(inside, lambda m: m.update(version=99)))
    else:
        raise AssertionError(kind)
    return path


@pytest.mark.parametrize("kind,said", [
    ("cut in half", "truncated"),
    ("cut at its last bytes", "truncated"),
    ("a byte changed", "damaged"),
    ("not gzip", "not a gzip archive"),
    ("a plain tar", "not a gzip archive"),
    ("another tar.gz", "which no companion backup holds"),
    ("no manifest", "holds no companion-backup/manifest.json"),
    ("a file not its manifest's", "SHA-256"),
    ("the log fails SQLite's integrity check", "fails SQLite's integrity check (NULL value in events.type"),
    ("not an SQLite file", "cannot be read by SQLite"),
    ("counts that are not the log's", "not the 2 and 14 its manifest counts"),
    ("a newer backup", "newer companion"),
])
def test_a_damaged_archive_is_refused_in_one_line_and_nothing_changes(tmp_path, good_backup, kind, said):
    archive = make_damaged(kind, good_backup, tmp_path)
    target = tmp_path / "pi"
    table = Table(target / "table.sqlite")
    table.start(NEW, source="phone")
    table.close()
    (target / "table.json").write_text('{"old": true}\n', encoding="utf-8")
    config = write_config(tmp_path / "pi.toml", target, "1357")
    before = files(tmp_path)
    out = companion("restore", archive, "--config", config, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == "" and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"companion: {archive} cannot be restored: ")
    assert said in out.stderr and out.stderr.endswith("; nothing was changed\n")
    assert files(tmp_path) == before
    assert companion("restore", archive, "--check", cwd=tmp_path).returncode == 2


def test_check_says_what_a_sound_backup_holds_and_changes_nothing(tmp_path, good_backup):
    archive = tmp_path / "b.tar.gz"
    archive.write_bytes(good_backup["archive"])
    before = files(tmp_path)
    out = companion("restore", archive, "--check", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "a sound companion backup" in out.stdout and "2 games, 13 events" in out.stdout
    assert "table.json, colours.json, companion.toml" in out.stdout
    assert files(tmp_path) == before


def test_backup_never_replaces_a_file_and_says_when_there_is_no_log(tmp_path):
    data = tmp_path / "data"
    table = play(data)
    table.close()
    (tmp_path / "b.tar.gz").write_bytes(b"an older backup")
    out = companion("backup", "--data-dir", data, "--out", tmp_path / "b.tar.gz", cwd=tmp_path)
    assert out.returncode == 2 and "already exists" in out.stderr and out.stderr.count("\n") == 1
    assert (tmp_path / "b.tar.gz").read_bytes() == b"an older backup"

    out = companion("backup", "--data-dir", tmp_path / "nothing", cwd=tmp_path)
    assert out.returncode == 2 and "there is no table log at" in out.stderr and out.stderr.count("\n") == 1
    assert not list(tmp_path.glob("companion-backup-*")) and not (tmp_path / "nothing").exists()


def test_the_archive_is_an_ordinary_tar_gz(tmp_path, good_backup):
    """A person can look inside with tar alone: one folder, the manifest first."""
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(good_backup["archive"]))) as tar:
        names = tar.getnames()
    assert names[0] == "companion-backup/manifest.json"
    assert {n.removeprefix("companion-backup/") for n in names} == MEMBERS
