from textwrap import dedent

import pytest

from durable_loop.core.errors import ErrorCode
from durable_loop.core.mcp import expand_all
from durable_loop.tools.ensembles import EnsembleLoadError
from durable_loop.tools.mcp import McpServerError, load_mcp_config


def test_config_file_reads_both_transports(tmp_path):
    path = tmp_path / "mcp.toml"
    path.write_text(
        dedent(
            """\
            [servers.files]
            command = "node"
            args = ["server.js", "/srv"]
            env = { TOKEN = "${FILES_TOKEN}" }

            [servers.search]
            url = "https://mcp.example.com/mcp"
            headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }
            timeout_s = 20
            required = false
            """
        )
    )
    files, search = load_mcp_config(path)
    assert (files.name, files.transport, files.args) == ("files", "stdio", ["server.js", "/srv"])
    assert (search.transport, search.timeout_s, search.required) == ("http", 20, False)
    assert "TOKEN" not in files.where() and "Bearer" not in search.where()


def test_broken_config_reports_file_line_and_field(tmp_path):
    path = tmp_path / "mcp.toml"
    path.write_text(
        '[servers.a]\ncommand = "x"\nurl = "http://h/mcp"\n\n[servers.b]\ncommand = "y"\n'
        "timeout_s = -1\n"
    )
    with pytest.raises(EnsembleLoadError) as err:
        load_mcp_config(path)
    found = [(p.line, p.field) for p in err.value.problems]
    assert (1, "servers.a") in found
    assert (7, "servers.b.timeout_s") in found
    assert "exactly one of command (stdio) or url" in str(err.value)


def test_secret_references_come_from_the_worker_environment():
    values = {"Authorization": "Bearer ${TOKEN}", "X-Plain": "plain"}
    assert expand_all(values, {"TOKEN": "abc"}, "srv") == {
        "Authorization": "Bearer abc",
        "X-Plain": "plain",
    }
    with pytest.raises(McpServerError) as err:
        expand_all(values, {}, "srv")
    assert err.value.code is ErrorCode.MCP_CONFIG_ERROR and err.value.server == "srv"
    assert "${TOKEN}" in str(err.value)
