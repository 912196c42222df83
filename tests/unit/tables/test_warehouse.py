import pytest

from tasks.tables.io import Workspace, write_table
from tasks.tables.warehouse import QueryRefused, check_readonly, run_query


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE sections",
        "COPY sections TO 'x.csv'",
        "CREATE TABLE t AS SELECT 1",
        "INSTALL fts",
        "ATTACH 'x.db'",
        "SET threads=1",
        "SELECT 1; DROP TABLE sections",
        "DELETE FROM chunks",
    ],
)
def test_writes_are_refused(sql):
    with pytest.raises(QueryRefused):
        check_readonly(sql)


def test_queries_run_over_views_and_cannot_read_elsewhere(tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    write_table(
        workspace,
        "failures",
        [{"doc_id": "d", "stage": "s", "item_id": "i", "error": "e", "payload": ""}],
        "d",
        "s",
    )
    assert run_query(workspace, "SELECT count(*) AS n FROM failures").to_pylist() == [{"n": 1}]
    assert run_query(workspace, "SELECT count(*) AS n FROM chunks").to_pylist() == [
        {"n": 0}
    ]  # empty, typed view
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n1\n")
    with pytest.raises(Exception, match="disabled by configuration|Permission"):
        run_query(workspace, f"SELECT * FROM read_csv('{outside}')")
