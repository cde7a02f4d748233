"""python3 -m eulernpu COMMAND [options]: the command line, in this Python.

The same commands and options as the `eulernpu` program (its global
options, --plugin-dir and --log-level, before the command); an error prints
its three lines and exits with status 1."""
import sys

from . import _installed_plugin_dir, _native
from .errors import Error


def main(argv=None):
    args = ["eulernpu"] + list(sys.argv[1:] if argv is None else argv)
    try:
        return _native.run(args, _installed_plugin_dir())
    except Error as e:
        sys.stdout.flush()
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Ctrl-C stops the command at its next progress event; the shell's
        # status for it, without a traceback.
        sys.stdout.flush()
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
