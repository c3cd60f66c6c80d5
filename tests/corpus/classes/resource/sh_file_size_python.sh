ulimit -f 8
echo "writing the archive"
python3 -c 'open("archive.bin", "wb").write(b"\0" * 1000000)'
