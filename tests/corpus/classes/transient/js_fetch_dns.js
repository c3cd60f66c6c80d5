(async () => {
  const res = await fetch("http://rates.healer-corpus.invalid/v1/today");
  console.log(await res.json());
})();
