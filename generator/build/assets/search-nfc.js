// Normalize what the reader types to NFC before Material's search reads it, so Vietnamese typed with
// combining diacritics (NFD) matches the NFC index.
document.addEventListener("input", (event) => {
  const field = event.target;
  if (field instanceof HTMLInputElement && field.classList.contains("md-search__input")) {
    const nfc = field.value.normalize("NFC");
    if (nfc !== field.value) field.value = nfc;
  }
}, true);
