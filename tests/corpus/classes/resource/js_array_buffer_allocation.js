// Reads the whole archive into one buffer.
const archive = new ArrayBuffer(2 ** 45);
console.log(archive.byteLength);
