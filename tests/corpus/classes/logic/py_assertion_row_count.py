rows = [("north", 3), ("south", 4)]
assert len(rows) == 3, f"expected 3 regions, got {len(rows)}"
print(rows)
