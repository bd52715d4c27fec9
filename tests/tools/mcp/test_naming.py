import mcp.types as mcp_types

from durable_loop.activities.mcp_pool import McpPool
from durable_loop.core.mcp import McpServerConfig
from durable_loop.core.tools import TOOL_NAME_PATTERN
from durable_loop.tools.mcp import ensemble_for
from durable_loop.tools.mcp.naming import safe_tool_name, snake


def test_snake_case_from_what_servers_use():
    assert snake("get-sum") == "get_sum"
    assert snake("Shout Text") == "shout_text"
    assert snake("readFileAsText") == "read_file_as_text"
    assert snake("files.read") == "files_read"
    assert snake("--") == ""


def test_names_are_prefixed_unique_and_provider_safe():
    taken: set[str] = {"toy_echo"}
    first = safe_tool_name("toy", "echo", taken)
    second = safe_tool_name("toy", "Echo", taken)
    assert first != "toy_echo" and first.startswith("toy_echo_")
    assert second not in {first, "toy_echo"}
    assert taken == {"toy_echo", first, second}
    assert safe_tool_name("", "2fast", set()) == "t_2fast"
    long_name = safe_tool_name("server", "x" * 200, set())
    assert len(long_name) == 64
    for name in [first, second, long_name]:
        assert TOOL_NAME_PATTERN.fullmatch(name)


def test_long_names_that_share_a_prefix_stay_distinct():
    taken: set[str] = set()
    a = safe_tool_name("s", "y" * 100 + "a", taken)
    b = safe_tool_name("s", "y" * 100 + "b", taken)
    assert a != b and len(a) == len(b) == 64


def test_a_mapped_mcp_tool_keeps_its_original_name_in_its_spec():
    config = McpServerConfig(name="toy", command="unused")
    listed = [
        mcp_types.Tool(name="Shout-Text", inputSchema={"type": "object"}),
        mcp_types.Tool(name="echo", inputSchema={"type": "object"}),
    ]
    ensemble, originals = ensemble_for(McpPool([]), config, listed, set())
    specs = {spec.name: spec for spec in ensemble.specs()}
    assert originals == {"toy_shout_text": "Shout-Text", "toy_echo": "echo"}
    assert specs["toy_shout_text"].original_name == "Shout-Text"
    assert specs["toy_echo"].original_name == "echo"
