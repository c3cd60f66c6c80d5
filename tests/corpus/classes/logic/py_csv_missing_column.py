import csv, io
data = io.StringIO("order;amount\n1;12.5\n")
for row in csv.DictReader(data):
    print(row["amount"])
