pages = ["p1", "p2"]
# The report expects a third page of results.
print(pages[2].upper())
