const body = "<!doctype html><title>Login</title>";

function parse(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error("the export endpoint returned something else than JSON", { cause: err });
  }
}

console.log(parse(body).rows.length);
