# The export renamed "total" to "amount"; the report still reads "total".
rows = [{"order": 1, "amount": 12.5}, {"order": 2, "amount": 8.0}]
print(sum(row["total"] for row in rows))
