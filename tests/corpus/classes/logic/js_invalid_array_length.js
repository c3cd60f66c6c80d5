const pages = -1; // the API reports -1 when there are no pages now
console.log(new Array(pages).fill(0));
