#!/usr/bin/env python3
"""The Django side of `make bench` (see README.md here)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
