import csv, io

data = io.StringIO("id,amount\n" + "".join(f"{i},{i * 3}\n" for i in range(503)))
rows = list(csv.DictReader(data))
if len(rows) > 500:
    raise ValueError(f"got {len(rows)} rows from the export, expected at most 500 (one page)")
