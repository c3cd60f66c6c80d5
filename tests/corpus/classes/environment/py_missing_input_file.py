import csv
with open("exports/orders-today.csv", newline="") as f:
    print(sum(1 for _ in csv.reader(f)))
