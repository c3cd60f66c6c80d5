async function main() {
  const res = await fetch(`${process.env.WEBHOOK_URL}/notify`, { method: "POST", body: "{}" });
  console.log(res.status);
}
main();
