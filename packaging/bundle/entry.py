"""The PyInstaller bundle's program: `flagdesk` as `app.cli.main` runs it, except `serve`, which
goes straight to the sandbox's own entry (`sandbox.__main__.main`: the same arguments, without
importing every other command first). It is how the bundle's GUI starts its embedded sandbox:
`sandbox.process.serve_command()` runs this executable with `serve`, there being no Python to
run `-m sandbox` with."""

import sys


def main() -> int:
    if sys.argv[1:2] == ["serve"]:
        from sandbox.__main__ import main as serve

        return serve(sys.argv[2:])
    from app.cli import main as flagdesk

    return flagdesk()


if __name__ == "__main__":
    sys.exit(main())
