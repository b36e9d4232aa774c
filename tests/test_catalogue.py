"""The database reads a run's events, snapshots, recognition features and posteriors from their Parquet files through
views: no copy, the same rows; a query of one run reads that run's files (`db.run_source`); every file read is first
compared with the size and checksum recorded when it was published, and a damaged one is named, never read."""

import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from riskcore import db
from riskcore.cli import main
from riskcore.db import query

SIM = ["simulate", "--run", "c", "--games", "6", "--chunk", "3", "--workers", "1", "--quiet"]


def _file_rows(root, run: str, table: str, tree: str = "traces") -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in (root / tree / f"run={run}" / table).glob("*.parquet"))


def _kinds(root) -> dict[str, str]:
    rows = query("SELECT table_name, table_type FROM information_schema.tables", data_dir=root)
    return dict(zip(rows.table_name, rows.table_type))


def test_events_and_snapshots_are_views_over_each_runs_current_files(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    assert main(SIM + data + ["--run", "d", "--games", "4"]) == 0
    assert main(SIM + data + ["--games", "9", "--seed", "7"]) == 0  # run c replaced: its new files only
    kinds = _kinds(tmp_path)
    assert kinds["events"] == kinds["snapshots"] == "VIEW" and kinds["games"] == "BASE TABLE"
    for table in ("events", "snapshots"):
        counts = query(f"SELECT run, count(*) AS n FROM {table} GROUP BY run", data_dir=tmp_path)
        assert dict(zip(counts.run, counts.n)) == {r: _file_rows(tmp_path, r, table) for r in ("c", "d")}
    games = query("SELECT count(DISTINCT game_id) AS n FROM events WHERE run = 'c'", data_dir=tmp_path).n[0]
    assert games == 9


def test_the_database_does_not_grow_with_the_traces(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data + ["--games", "10"]) == 0
    small = (tmp_path / "riskcore.duckdb").stat().st_size
    assert main(SIM + data + ["--games", "1500", "--chunk", "250"]) == 0
    grown = (tmp_path / "riskcore.duckdb").stat().st_size - small
    traces = sum(f.stat().st_size for f in (tmp_path / "traces" / "run=c").glob("[es]*/*.parquet"))
    assert grown < traces / 2  # a copy took about three times the Parquet's bytes


def test_a_moved_data_directory_reads_the_same_rows(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path / "here")]) == 0
    before = query("SELECT * FROM events ORDER BY game_id, seq", data_dir=tmp_path / "here")
    shutil.move(tmp_path / "here", tmp_path / "there")
    after = query("SELECT * FROM events ORDER BY game_id, seq", data_dir=tmp_path / "there")
    assert len(before) > 0 and before.equals(after)


def test_recognition_features_are_views_and_a_run_reads_its_own_files(tmp_path):
    from riskcore.recognition.features import load_features
    from riskcore.recognition.pipeline import ensure_features

    data = ["--data-dir", str(tmp_path)]
    for run in ("c", "d"):
        assert main(SIM + data + ["--run", run]) == 0
        ensure_features(run, "cards6", tmp_path, workers=1, progress=False)
    kinds = _kinds(tmp_path)
    features = ("rec_observations", "rec_pending", "rec_candidates")
    assert all(kinds[t] == "VIEW" for t in features)
    for table in features:
        source = db.run_source(table, "c", tmp_path)
        assert "run=c" in source and "run=d" not in source
        whole = query(f"SELECT count(*) AS n FROM {table} WHERE run = 'c'", data_dir=tmp_path).n[0]
        own = query(f"SELECT count(*) AS n FROM {source}", data_dir=tmp_path).n[0]
        assert whole == own > 0
    assert db.run_source("games", "c", tmp_path) == "games"
    assert len(load_features("d", "cards6", tmp_path).obs) == query(
        "SELECT count(*) AS n FROM rec_observations WHERE run = 'd'", data_dir=tmp_path).n[0]


def test_a_database_that_held_copies_moves_them_to_views_on_the_next_write(tmp_path):
    from riskcore.recognition.pipeline import ensure_features

    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    ensure_features("c", "cards6", tmp_path, workers=1, progress=False)
    with db.transaction(tmp_path) as con:  # the catalogue as an older riskcore wrote it
        for table in ("events", "snapshots", "rec_observations", "rec_pending", "rec_candidates"):
            con.execute(f"CREATE TABLE copy AS SELECT * FROM {table}")
            con.execute(f"DROP VIEW {table}")
            con.execute(f"ALTER TABLE copy RENAME TO {table}")
        con.execute(f"DROP TABLE {db.VIEWED_FILES}")
    assert _kinds(tmp_path)["events"] == "BASE TABLE"
    assert main(SIM + data + ["--run", "d", "--games", "4"]) == 0
    ensure_features("d", "cards6", tmp_path, workers=1, progress=False)
    assert _kinds(tmp_path)["events"] == _kinds(tmp_path)["snapshots"] == _kinds(tmp_path)["rec_pending"] == "VIEW"
    counts = query("SELECT run, count(*) AS n FROM snapshots GROUP BY run", data_dir=tmp_path)
    assert dict(zip(counts.run, counts.n)) == {r: _file_rows(tmp_path, r, "snapshots") for r in ("c", "d")}
    pending = query("SELECT run, count(*) AS n FROM rec_pending GROUP BY run", data_dir=tmp_path)
    assert dict(zip(pending.run, pending.n)) == {r: _file_rows(tmp_path, r, "rec_pending", "recognition")
                                                 for r in ("c", "d")}


def test_no_reader_opens_the_database_while_a_runs_files_are_being_replaced(tmp_path, monkeypatch):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    seen = {}

    def reader_at(step: str) -> None:
        if step == "new-placed":  # the new files are in place, their rows not yet committed
            code = (f"import duckdb; duckdb.connect({str(tmp_path / 'riskcore.duckdb')!r}, read_only=True)"
                    ".execute('SELECT count(*) FROM events').fetchall()")
            seen["reader"] = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    monkeypatch.setattr("riskcore.publish.fault", reader_at)
    assert main(SIM + data + ["--games", "9", "--seed", "7"]) == 0
    assert seen["reader"].returncode != 0 and "lock" in seen["reader"].stderr.lower()


def test_a_reading_block_opens_the_database_once_and_holds_nothing_after_it(tmp_path, monkeypatch):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    opened = []
    real = db.connect
    monkeypatch.setattr(db, "connect", lambda *a, **k: opened.append(k.get("read_only")) or real(*a, **k))
    with db.reading(tmp_path):
        with db.reading(tmp_path):  # nested: the enclosing block's connection
            games = query("SELECT count(*) AS n FROM games", data_dir=tmp_path).n[0]
        events = query("SELECT count(*) AS n FROM events", data_dir=tmp_path).n[0]
    assert opened == [True] and games == 6 and events > 0
    try:
        with db.reading(tmp_path):
            query("SELECT * FROM no_such_table", data_dir=tmp_path)
    except Exception:
        pass
    assert not db._HELD.connections  # closed on the way out of a failed block too
    with db.transaction(tmp_path) as con:  # a writer opens: no reading connection was left behind
        con.execute("CREATE TABLE scratch AS SELECT 1 AS x")
    assert query("SELECT x FROM scratch", data_dir=tmp_path).x[0] == 1


def test_a_reading_blocks_connection_serves_only_its_own_thread(tmp_path):
    import threading

    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    seen = {}
    with db.reading(tmp_path):
        mine = db._HELD.connections.get(db.paths.db_path(tmp_path))
        other = threading.Thread(target=lambda: seen.update(held=dict(db._HELD.connections),
                                                             n=query("SELECT count(*) AS n FROM games",
                                                                     data_dir=tmp_path).n[0]))
        other.start()
        other.join()
    assert mine is not None and seen == {"held": {}, "n": 6}  # the other thread opened its own


def test_a_read_of_a_few_games_opens_only_the_files_that_hold_them(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path), "--games", "9"]) == 0  # three files of three games
    whole = db.run_source("events", "c", tmp_path)
    few = db.run_source("events", "c", tmp_path, (3, 4))
    assert whole.count(".parquet") == 3 and few.count(".parquet") == 1
    sql = "SELECT * FROM {} WHERE run = 'c' AND game_id BETWEEN 3 AND 4 ORDER BY game_id, seq"
    assert query(sql.format(few), data_dir=tmp_path).equals(query(sql.format(whole), data_dir=tmp_path))
    assert db.run_source("events", "c", tmp_path, (5, 6)).count(".parquet") == 2  # a range across two files
    assert db.run_source("events", "c", tmp_path, (50, 60)).count(".parquet") == 3  # none: reads as no rows
    assert query(f"SELECT count(*) AS n FROM {db.run_source('events', 'c', tmp_path, (50, 60))} "
                 "WHERE game_id BETWEEN 50 AND 60", data_dir=tmp_path).n[0] == 0


def test_inside_a_reading_block_the_file_list_is_read_once_and_picks_the_same_files(tmp_path, monkeypatch):
    assert main(SIM + ["--data-dir", str(tmp_path), "--games", "9"]) == 0
    ranges = [(3, 4), (5, 6), (50, 60), (0, 8)]
    alone = [db.run_source("events", "c", tmp_path, games) for games in ranges]
    lists, real = [], db.query

    def counted(sql, *args, **kwargs):  # the reads of a file list with its game ranges
        if "FROM viewed_files" in sql:
            lists.append(sql)
        return real(sql, *args, **kwargs)

    monkeypatch.setattr(db, "query", counted)
    with db.reading(tmp_path):
        assert [db.run_source("events", "c", tmp_path, games) for games in ranges] == alone
        assert db.run_source("snapshots", "c", tmp_path, (3, 4)).count(".parquet") == 1  # its own list
    assert len(lists) == 2  # the events' list once, the snapshots' once
    db.run_source("events", "c", tmp_path, (3, 4))
    assert len(lists) == 3  # outside a block every read lists the files again: a writer may have come between


def test_trace_files_carry_statistics_for_the_columns_reads_select_by_and_dictionaries_for_text(tmp_path):
    import pyarrow.parquet as pq

    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    meta = pq.read_metadata(next((tmp_path / "traces" / "run=c" / "events").glob("*.parquet")))
    columns = {meta.schema.column(i).name: meta.row_group(0).column(i) for i in range(meta.num_columns)}
    assert {c for c, m in columns.items() if m.is_stats_set} == {"run", "game_id", "turn", "player"}
    assert {c for c, m in columns.items() if m.dictionary_page_offset is not None} == {
        "run", "phase", "kind", "cards", "engine_version"}


def test_files_listed_before_they_had_game_ranges_are_read_for_every_range(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data + ["--games", "9"]) == 0
    with db.transaction(tmp_path) as con:  # the list as an older riskcore wrote it
        con.execute(f"ALTER TABLE {db.VIEWED_FILES} DROP COLUMN first_game")
        con.execute(f"ALTER TABLE {db.VIEWED_FILES} DROP COLUMN last_game")
    assert db.run_source("events", "c", tmp_path, (3, 4)).count(".parquet") == 3
    assert main(SIM + data + ["--run", "d", "--games", "6"]) == 0  # the next write adds the ranges
    assert db.run_source("events", "d", tmp_path, (3, 4)).count(".parquet") == 1
    assert db.run_source("events", "c", tmp_path, (3, 4)).count(".parquet") == 3


def test_the_snapshots_view_reads_runs_of_both_snapshot_layouts(tmp_path):
    """A data folder may hold runs from before snapshots were a row a turn (their files a row per territory)."""
    import duckdb

    from riskcore.publish import seal
    from riskcore.replay import load_game

    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data) == 0
    for part in sorted((tmp_path / "traces" / "run=c" / "snapshots").glob("*.parquet")):
        duckdb.sql(f"""COPY (SELECT run, game_id, turn, player, CAST(t - 1 AS SMALLINT) AS territory,
                               owners[t] AS owner, army_counts[t] AS armies, engine_version
                        FROM read_parquet('{part}'), range(1, len(owners) + 1) AS r(t)) TO '{part}.old'
                        (FORMAT parquet)""")
        part.with_name(part.name + ".old").replace(part)
    seal(tmp_path / "traces" / "run=c", "traces", {"run": "c"})  # the run as such an engine recorded it
    assert main(["db", "--rebuild"] + data) == 0
    assert main(SIM + data + ["--run", "d", "--games", "4"]) == 0
    rows = query("SELECT run, count(*) AS n, count(territory) AS old, count(owners) AS new FROM snapshots "
                 "GROUP BY run ORDER BY run", data_dir=tmp_path)
    assert rows.n.tolist() == [_file_rows(tmp_path, r, "snapshots") for r in ("c", "d")]
    assert rows.old.tolist() == [rows.n[0], 0] and rows.new.tolist() == [0, rows.n[1]]
    assert len(load_game("c", 0, tmp_path)[3]) > len(load_game("d", 0, tmp_path)[3])


def test_the_row_per_territory_query_in_the_data_docs_gives_every_territory_of_every_turn(tmp_path):
    import re
    from pathlib import Path

    docs = (Path(__file__).parents[1] / "docs" / "data.md").read_text()
    sql = re.search(r"A row per territory in SQL: `([^`]+)`", docs).group(1)
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    long = query(f"SELECT * FROM ({sql}) WHERE game_id = 1 ORDER BY turn, territory", data_dir=tmp_path)
    turns = query("SELECT turn, owners, army_counts FROM snapshots WHERE game_id = 1 ORDER BY turn",
                  data_dir=tmp_path)
    assert len(long) == 42 * len(turns) and long.territory.tolist()[:42] == list(range(42))
    first = long[long.turn == turns.turn[0]]
    assert first.owner.tolist() == list(turns.owners[0]) and first.armies.tolist() == list(turns.army_counts[0])


GOAL = "goal:temperature=0.1"  # the setting `--recogniser goal` stores


def _posterior_counts(root) -> dict[str, int]:
    rows = query("SELECT setting, count(*) AS n FROM posteriors WHERE run = 'c' GROUP BY setting", data_dir=root)
    return dict(zip(rows.setting, rows.n))


def _posterior_file_rows(root) -> dict[str, int]:
    files = (root / "posteriors" / "run=c" / "posteriors").glob("*.parquet")
    tables = [pq.read_table(f, columns=["setting"]) for f in files]
    return {t.column("setting")[0].as_py(): t.num_rows for t in tables}


def _recognise(root, *settings: str) -> None:
    for setting in settings:
        assert main(["recognize", "--run", "c", "--recogniser", setting, "--quiet", "--workers", "1",
                     "--data-dir", str(root)]) == 0


def test_posteriors_are_a_view_listed_by_setting_and_a_replaced_setting_is_read_once(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    _recognise(tmp_path, "uniform", "goal", "uniform")
    assert _kinds(tmp_path)["posteriors"] == "VIEW"
    assert _posterior_counts(tmp_path) == _posterior_file_rows(tmp_path) and len(_posterior_counts(tmp_path)) == 2
    one = db.run_source("posteriors", "c", tmp_path, settings=[GOAL])
    assert one.count(".parquet") == 1 and db.run_source("posteriors", "c", tmp_path).count(".parquet") == 2
    assert query(f"SELECT DISTINCT setting FROM {one}", data_dir=tmp_path).setting.tolist() == [GOAL]


def test_a_rebuilt_catalogue_lists_each_posterior_file_under_its_own_setting(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    _recognise(tmp_path, "uniform", "goal")
    db.rebuild(tmp_path)  # registers the run's posterior directory whole: the settings come from the files
    keys = query(f"SELECT key FROM {db.VIEWED_FILES} WHERE table_name = 'posteriors' ORDER BY key",
                 data_dir=tmp_path).key.tolist()
    assert keys == [f"run='c', setting='{GOAL}'", "run='c', setting='uniform'"]
    _recognise(tmp_path, "goal")  # replaces its own listing, not a second one beside the rebuilt one
    assert _posterior_counts(tmp_path) == _posterior_file_rows(tmp_path)


def test_a_catalogue_that_held_a_copy_of_the_posteriors_lists_their_files_by_setting(tmp_path):
    assert main(SIM + ["--data-dir", str(tmp_path)]) == 0
    _recognise(tmp_path, "uniform", "goal")
    with db.transaction(tmp_path) as con:  # the catalogue as an older riskcore wrote it
        con.execute("CREATE TABLE copy AS SELECT * FROM posteriors")
        con.execute("DROP VIEW posteriors")
        con.execute("ALTER TABLE copy RENAME TO posteriors")
        con.execute(f"DELETE FROM {db.VIEWED_FILES} WHERE table_name = 'posteriors'")
    _recognise(tmp_path, "uniform")
    assert _kinds(tmp_path)["posteriors"] == "VIEW"
    assert _posterior_counts(tmp_path) == _posterior_file_rows(tmp_path)


def test_a_file_that_holds_two_values_of_a_key_is_named(tmp_path):
    import pyarrow as pa
    import pytest

    mixed = tmp_path / "mixed.parquet"
    pq.write_table(pa.table({"run": ["c", "c"], "setting": ["a", "b"]}), mixed)
    with pytest.raises(db.DataError, match="mixed.parquet: 2 values of 'setting'"):
        db._constant_columns(mixed, ("run", "setting"))
    pq.write_table(pa.table({"run": ["c"], "setting": ["a"]}), mixed, write_statistics=False)
    assert db._constant_columns(mixed, ("run", "setting")) == {"run": "c", "setting": "a"}


def _flip(path, at: int | None = None) -> None:
    """One byte changed (by default in the middle of the file), its size kept (what a failing disk or a stray write
    does)."""
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2 if at is None else at] ^= 0x5A
    path.write_bytes(bytes(raw))


def test_a_run_played_again_with_fewer_games_replaces_the_old_one(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    assert main(SIM + data + ["--games", "24", "--seed", "1"]) == 0  # 8 parts
    assert main(SIM + data + ["--run", "d", "--games", "4"]) == 0
    assert main(SIM + data + ["--games", "6", "--seed", "2"]) == 0  # 2 parts: 6 of c's files are gone
    games = query("SELECT run, count(DISTINCT game_id) AS n FROM events GROUP BY run ORDER BY run", data_dir=tmp_path)
    assert games.n.tolist() == [6, 4]
    assert main(["replay", "--run", "c"] + data) == 0


# a file of each table kind: (tree, table), whether the database reads it through a view (else it holds a copy)
KINDS = [("traces", "events", True), ("traces", "games", False), ("recognition", "rec_pending", True),
         ("posteriors", "posteriors", True), ("metrics", "recognition_metrics", False),
         ("posteriors", "generations_posteriors", False)]


@pytest.mark.parametrize("tree,table,viewed", KINDS)
def test_a_flipped_byte_in_any_table_kind_is_named_and_never_read(evaluated, tmp_path, capsys, tree, table, viewed):
    data = tmp_path / "data"
    shutil.copytree(evaluated, data)
    bad = sorted((data / tree / "run=c" / table).glob("*.parquet"))[0]
    # a record's middle may be statistics no reader uses: its first data page is read whatever is asked
    _flip(bad, 8 if table.startswith("generations_") else None)
    capsys.readouterr()
    assert main(["check", "--data-dir", str(data)]) == 2
    out = capsys.readouterr().out  # a publication's own record cannot be read at all: it says so
    assert f"{bad}: damaged" in out or f"{bad}: unreadable" in out
    if viewed:  # the readers of the view refuse the file, naming it
        with pytest.raises(db.DataError, match=f"{bad}: damaged"):
            query(f"SELECT count(*) FROM {table}", data_dir=data)
        reader = {"events": ["replay", "--run", "c"], "rec_pending": ["recognize", "--run", "c", "--recogniser",
                                                                      "goal", "--quiet"],
                  "posteriors": ["evaluate", "--run", "c", "--bootstrap", "10"]}[table]
        assert main(reader + ["--data-dir", str(data)]) == 2
        assert f"{bad}: damaged" in capsys.readouterr().err


def test_evaluate_refuses_a_posteriors_file_with_a_flipped_byte(evaluated, tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(evaluated, data)
    before = query("SELECT * FROM recognition_metrics ORDER BY ALL", data_dir=data)
    bad = next((data / "posteriors" / "run=c" / "posteriors").glob("*.parquet"))
    _flip(bad)
    capsys.readouterr()
    assert main(["evaluate", "--run", "c", "--bootstrap", "10", "--data-dir", str(data)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert query("SELECT * FROM recognition_metrics ORDER BY ALL", data_dir=data).equals(before)


def test_a_viewed_file_is_hashed_once_a_process_while_it_stays_the_same(evaluated, monkeypatch):
    from riskcore import publish

    hashed = []
    real = publish.fast_checksum
    monkeypatch.setattr(publish, "fast_checksum", lambda path: hashed.append(path) or real(path))
    db._VERIFIED.clear()
    files = len(query("SELECT * FROM viewed_files WHERE table_name = 'events'", data_dir=evaluated))
    query("SELECT count(*) FROM events", data_dir=evaluated)
    query("SELECT count(*) FROM events", data_dir=evaluated)
    assert len(hashed) == files
