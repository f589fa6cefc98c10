"""Notebook cells -> the course's modules, statically: each function with what it needs, nothing
else run."""

from __future__ import annotations

import ast

from grader.intake.extract import modules_from_cells

FUNCTIONS = {"layernorm": "layernorm", "gelu": "gelu", "mlp": "block", "block": "block"}


def build(*sources: str):
    return modules_from_cells([(f"cell {i}", s) for i, s in enumerate(sources, 1)], FUNCTIONS)


def top_level_names(source: str) -> set[str]:
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def test_each_function_goes_to_its_module_with_the_helpers_and_imports_it_uses():
    result = build(
        "import numpy as np\nimport matplotlib.pyplot as plt\nX = np.load('data.npy')\n",
        "EPS = 1e-5\n\ndef _mean(x):\n    return x.mean(-1, keepdims=True)\n\n"
        "def layernorm(x, eps=EPS):\n    X = x - _mean(x)\n"
        "    return X / np.sqrt((X**2).mean(-1, keepdims=True) + eps)\n",
        "plt.plot(layernorm(X))\nprint('done')\n",
    )
    assert set(result.modules) == {"layernorm"}
    source = result.modules["layernorm"]
    assert top_level_names(source) == {"np", "EPS", "_mean", "layernorm"}  # not plt, not the data X
    assert "print" not in source and "plt" not in source
    namespace: dict = {}
    exec(compile(source, "layernorm.py", "exec"), namespace)  # our own test code: safe to run
    assert abs(namespace["layernorm"](__import__("numpy").array([1.0, 3.0])) - [-1, 1]).max() < 1e-4


def test_functions_of_other_modules_are_imported_by_name_as_in_the_stubs():
    result = build(
        "def layernorm(x):\n    return x\n",
        "from layernorm import layernorm\n\ndef gelu(x):\n    return x\n",
        "def mlp(u, W_1, W_2):\n    return gelu(u @ W_1) @ W_2\n\n"
        "def block(x, params):\n    return x + mlp(layernorm(x), params['W_1'], params['W_2'])\n",
    )
    block = result.modules["block"]
    assert "from gelu import gelu" in block and "from layernorm import layernorm" in block
    assert "def layernorm" not in block and "def gelu" not in block
    assert "layernorm" not in top_level_names(result.modules["gelu"]) - {
        "gelu"
    }  # the import is not copied


def test_magics_and_shell_escapes_are_left_out_and_said():
    result = build(
        "%matplotlib inline\n!pip install numpy\nimport numpy as np\nfiles = !ls\n",
        "%%time\ndef gelu(x):\n    return np.tanh(x)\n",
        "%%bash\necho hi\n",
        "def layernorm(x):\n    np.mean?\n    return x\n",
    )
    assert "gelu" in result.modules and "layernorm" in result.modules
    assert "!" not in result.modules["gelu"] and "%" not in result.modules["gelu"]
    notes = " | ".join(result.notes)
    assert "cell 1: left out 3 IPython magic or shell lines" in notes
    assert "cell 2: left out its cell magic %%time" in notes
    assert "cell 3 skipped: a cell magic (%%bash)" in notes


def test_a_cell_that_is_not_python_is_skipped_and_its_functions_reported_missing():
    result = build("def gelu(x):\n    return x\n", "def layernorm(x:\n    return x\n")
    assert "layernorm" not in result.modules
    assert any(n.startswith("cell 2 skipped: it is not valid Python") for n in result.notes)
    assert "no code defines layernorm() (module layernorm)" in result.notes


def test_a_duplicated_cell_is_said_and_the_last_definition_wins():
    result = build("def gelu(x):\n    return 1\n", "def gelu(x):\n    return 2\n")
    namespace: dict = {}
    exec(result.modules["gelu"], namespace)
    assert namespace["gelu"](0) == 2
    assert "gelu() is defined 2 times (cell 1, cell 2): the last one is graded" in result.notes


def test_missing_functions_are_listed_and_their_module_left_out():
    result = build("def mlp(u, W_1, W_2):\n    return u\n")
    assert set(result.modules) == {"block"}  # mlp alone still makes block.py
    for function in ("layernorm", "gelu", "block"):
        assert any(f"no code defines {function}()" in n for n in result.notes)
