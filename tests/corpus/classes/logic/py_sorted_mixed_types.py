# Some amounts are strings now.
amounts = [12.5, "8.0", 3]
print(sorted(amounts))
