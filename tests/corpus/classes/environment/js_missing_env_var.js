const key = process.env.SHOP_API_KEY;
if (!key) {
  throw new Error("SHOP_API_KEY is not set: add it to the workflow's environment");
}
console.log(key.slice(0, 4));
