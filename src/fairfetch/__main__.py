"""``python -m fairfetch``: the same as the ``fairfetch`` command."""

from fairfetch.cli import main

main()
