"""One module per output format, each a registered exporter that renders the Report it is given (report/base.py):
markdown, csv, json, terminal, plots (PNG), html (report.html)."""
