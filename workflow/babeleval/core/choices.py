"""The letters choices are shown and read as: A, B, C ... in order, one per choice."""

import string

LETTERS = string.ascii_uppercase
