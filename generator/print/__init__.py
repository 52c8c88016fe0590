"""Print: the one-page cheat-sheets as PDFs (WeasyPrint, fonts embedded), checked to fit their page."""
