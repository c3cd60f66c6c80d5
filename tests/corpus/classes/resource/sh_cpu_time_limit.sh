ulimit -t 1
echo "crunching the monthly numbers"
python3 -c 'while True: pass'
