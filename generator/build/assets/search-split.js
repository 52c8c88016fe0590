// The build writes one search index per language (search/search_index.<lang>.json). Material asks for the index of
// every language at once; before its bundle runs, this makes it ask for the page's language only, so a reader
// downloads a third of it, and the results are in the language being read.
(function () {
  const lang = document.documentElement.lang;
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const href = String(url);
    const index = /\/search\/search_index\.json$/;
    return open.call(this, method, index.test(href) ? href.replace(index, `/search/search_index.${lang}.json`) : url,
      ...rest);
  };
})();
