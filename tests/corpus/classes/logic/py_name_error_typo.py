def report(rows):
    totl = sum(rows)
    return total

print(report([1, 2, 3]))
