echo "fetched 120 rows"
echo "writing report.csv"
exit 3
