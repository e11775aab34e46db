"""The ``errata`` command of the wheel: the release ``errata`` binary shipped inside it.

``pipx install errata`` (or ``pip install errata``) puts ``errata`` on PATH; it runs the
binary in ``errata/bin/`` with the same arguments, standard streams and exit code, so
``errata match``, ``errata check``, ``errata mcp``... behave exactly as the CLI built
from source does (the knowledge base is inside the binary too).
"""

import os
import subprocess
import sys
from importlib import resources


def binary() -> str:
    """The path of the shipped binary."""
    name = "errata.exe" if os.name == "nt" else "errata"
    return str(resources.files("errata").joinpath("bin", name))


def main() -> None:
    path = binary()
    if not os.path.isfile(path):
        sys.stderr.write(
            f"errata: this installation has no errata binary ({path}); "
            "build the wheel with `cargo xtask py-wheel`\n"
        )
        sys.exit(2)
    if not os.access(path, os.X_OK):
        try:
            os.chmod(path, 0o755)
        except OSError:
            pass
    argv = [path] + sys.argv[1:]
    if os.name == "nt":
        sys.exit(subprocess.call(argv))
    os.execv(path, argv)


if __name__ == "__main__":
    main()
