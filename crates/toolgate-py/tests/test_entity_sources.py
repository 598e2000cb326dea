"""PostgreSQL entity sources in ``Gate.from_config``: with the store built
in, the gate fetches a call's resource from the database, as the CLI and
``toolgate serve`` do; without it, loading the config says which build
runs them (never a gate without its data)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest

import toolgate

from conftest import ROOT, require_external

PG = os.environ.get("TOOLGATE_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
QUERY = "SELECT entity::text FROM orders WHERE $1 = 'Order' AND id = $2"


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, capture_output=True)


@pytest.fixture()
def orders_db() -> Iterator[str]:
    """A database of its own holding two orders as Cedar entities."""
    reachable = shutil.which("psql") is not None and (
        subprocess.run(["psql", PG, "-c", "SELECT 1"], capture_output=True).returncode == 0
    )
    if not reachable:
        if require_external():
            pytest.fail(f"no PostgreSQL at {PG} (TOOLGATE_TEST_POSTGRES_URL)")
        pytest.skip(f"no PostgreSQL at {PG} (TOOLGATE_TEST_POSTGRES_URL)")
    name = "tg_py_source_" + uuid.uuid4().hex[:12]
    psql(PG, f"CREATE DATABASE {name}")
    url = PG.rsplit("/", 1)[0] + "/" + name
    try:
        psql(url, "CREATE TABLE orders (id text PRIMARY KEY, entity jsonb NOT NULL)")
        for order, owner in [("ord_1001", "alice"), ("ord_2001", "bob")]:
            entity = {
                "uid": {"type": "Order", "id": order},
                "attrs": {"owner": {"type": "User", "id": owner}, "total_cents": 4999},
                "parents": [],
            }
            psql(url, f"INSERT INTO orders VALUES ('{order}', '{json.dumps(entity)}')")
        yield url
    finally:
        psql(PG, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def shop_with_source(tmp: Path, url: str) -> Path:
    """The shop example with its orders taken out of the static entities
    and served by a PostgreSQL source instead."""
    shop = tmp / "shop"
    shutil.copytree(ROOT / "examples" / "shop", shop)
    people = [e for e in json.loads((shop / "entities.json").read_text()) if e["uid"]["type"] != "Order"]
    (shop / "entities.json").write_text(json.dumps(people))
    config = shop / "toolgate.toml"
    config.write_text(
        config.read_text()
        + f'\n[[authorization.sources]]\nkind = "postgres"\ntypes = ["Order"]\nurl = "{url}"\nquery = "{QUERY}"\n'
    )
    return config


def test_the_store_build_reads_orders_from_postgresql(
    store_build: None, orders_db: str, tmp_path: Path
) -> None:
    gate = toolgate.Gate.from_config(str(shop_with_source(tmp_path, orders_db)), store=False)
    context = {"user": "alice", "session": "s", "turn": 1}
    own = gate.decide_call("get_order", '{"order_id": "ord_1001"}', context).calls[0]
    assert own.verdict == "allow", own.reasons
    other = gate.decide_call("get_order", '{"order_id": "ord_2001"}', context).calls[0]
    assert (other.verdict, [r.code for r in other.reasons]) == ("deny", ["not_owner"])
    # No row: no such order, denied like another user's.
    gone = gate.decide_call("get_order", '{"order_id": "ord_9999"}', context).calls[0]
    assert [r.code for r in gone.reasons] == ["not_owner"]


def test_without_the_store_the_config_says_which_build_runs_the_source(tmp_path: Path) -> None:
    if "store" in toolgate.features:
        pytest.skip("this wheel has the store built in (the test of the default wheel)")
    config = shop_with_source(tmp_path, "postgres://nobody@127.0.0.1:1/none")
    with pytest.raises(toolgate.ConfigError) as e:
        toolgate.Gate.from_config(str(config), store=False)
    assert "`postgres` entity source needs the store" in str(e.value)
    assert '--features store' in str(e.value)
