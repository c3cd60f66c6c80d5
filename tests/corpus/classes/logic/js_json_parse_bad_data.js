// The feed answers with an HTML error page now.
const body = "<!DOCTYPE html><html><body>Moved</body></html>";
console.log(JSON.parse(body).items.length);
