node --max-old-space-size=16 -e 'const a = []; for (;;) a.push({ n: a.length, pad: "x".repeat(64) })' 2>&1 | tail -4
exit "${PIPESTATUS[0]}"
