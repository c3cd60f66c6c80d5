class ReportError(Exception):
    pass

def check(rows):
    for row in rows:
        if row["amount"] < 0:
            raise ReportError(f"negative amount in order {row['order']}")

check([{"order": 1, "amount": 3}, {"order": 2, "amount": -4}])
