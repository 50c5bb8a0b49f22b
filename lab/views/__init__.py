"""Ranking lab pages: compare two profiles on one query (live sliders, explain, judgments),
profiles, query sets, evaluation runs and their comparison.

Every page works without JavaScript: state lives in the URL (GET forms), writes are POST
forms that redirect back. htmx only makes it faster (one view, two renderings: the page or
its ``#partial``). Charts are inline SVG whose geometry is computed here, server-side
(``lab.views.charts``).
"""
