rows = [{"sku": "a1", "qty": "3"}, {"sku": "b2", "qty": "three"}]

total = 0
for row in rows:
    try:
        total += int(row["qty"])
    except ValueError:
        logger.warning("bad quantity in %s", row)
print(total)
