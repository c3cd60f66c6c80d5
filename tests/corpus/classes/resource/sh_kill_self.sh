echo "processing 2 million rows"
kill -9 $$
