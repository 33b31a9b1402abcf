"""Allocates (and touches) memory without bound."""

hoard = []
while True:
    hoard.append(bytearray(8 << 20))
