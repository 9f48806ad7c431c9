/*
 * pages.c - the three printers of the report's tables and charts:
 *   index.html  self-contained: CSS in the page, every chart's SVG inline (its
 *               XML prolog dropped, its ids prefixed per chart so that the inlined
 *               SVGs do not share ids), no script, no network, readable as it is;
 *   report.md   the same sections in Markdown, charts linked from plots/;
 *   csv/NAME.csv one file per table (RFC 4180), numbers with 17 significant digits.
 *
 * The page opens with the overview (each device's roofline, then its kernels that take the most
 * time), then the contents and the other sections; report.md follows the same order. Every
 * measurement table row has an id (m-<id>) that the charts' points link to.
 *
 * Assumes: tables and charts come in section order; a kernel-section table or
 * chart names its family, so each family's charts sit beside its table; an overview table and
 * its device's rooflines share the key d<ID>.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const section_id[RP_SEC_COUNT] = {"overview", "devices", "gpus",   "kernels",
                                                     "model",    "tsm2",    "energy", "compare"};
static const char *const section_title[RP_SEC_COUNT] = {"Overview",
                                                        "Devices and ceilings",
                                                        "Several GPUs, hosts and ranks",
                                                        "Kernels",
                                                        "Model accuracy",
                                                        "TSM2 and ISM2",
                                                        "Energy",
                                                        "Comparison with a baseline"};

/* Does section s have anything to show? Only the section of several GPUs and ranks can be
 * empty (a one-GPU database): it is then left out of the page altogether. */
static int section_shown(const struct rp_page *pg, int s)
{
    for (int i = 0; i < pg->ntables; i++)
        if (pg->tables[i].section == s)
            return 1;
    for (int i = 0; i < pg->ncharts; i++)
        if (pg->charts[i].section == s)
            return 1;
    return 0;
}

/* Where section s prints its charts: 1 under the table whose family (key) they carry, -1 above
 * it (the overview: a device's roofline, then its kernels), 0 after all its tables. */
static int charts_by_table(int s)
{
    return s == RP_SEC_KERNELS || s == RP_SEC_GPUS ? 1 : s == RP_SEC_OVERVIEW ? -1 : 0;
}

/* What the database lacks, one sentence each, into b as items (html) or bullets. */
static int missing(const struct rp_page *pg, const char **out, int max)
{
    const struct rp_data *d = pg->d;
    int n = 0, nceil = 0, nlat = 0;
    for (int i = 0; i < d->ndevs; i++) {
        nceil += d->devs[i].a.nceil;
        nlat += d->devs[i].a.npts;
    }
    if (d->ndevs == 0 && n < max)
        out[n++] = "No device: run 'roofkit probe' (or 'roofkit all') on a machine with a GPU.";
    if (d->ndevs && nceil == 0 && n < max)
        out[n++] = "No ceilings: run 'roofkit probe' to measure bandwidths and peaks; the "
                   "rooflines have no roof without them.";
    if (d->ndevs && nlat == 0 && n < max)
        out[n++] = "No latency curve: run 'roofkit probe --only latency'.";
    if (d->nrows == 0 && n < max)
        out[n++] = "No measurements: run 'roofkit run' (the kernel suite) or 'roofkit profile "
                   "-- PROGRAM'.";
    if (d->nrows && d->nmodels == 0 && n < max)
        out[n++] = "No predictions: run 'roofkit model'.";
    if (pg->ncharts && !pg->charts_drawn && n < max)
        out[n++] = pg->charts_why ? pg->charts_why : "The charts were not drawn.";
    return n;
}

/* The predictions with a time, the models that made one, and the rows a model was not applied
 * to: a prediction without a time holds the model's reason, and is no prediction. */
struct pred_count {
    long long timed, reasons;
    int models;
};

static struct pred_count count_predictions(const struct rp_data *d)
{
    struct pred_count c = {0, 0, 0};
    for (int j = 0; j < d->nmodels; j++) {
        long long n = 0;
        for (int i = 0; i < d->nrows; i++) {
            const struct db_prediction *p = rp_prediction(&d->meas[i], d->models[j]);
            if (!p)
                continue;
            n += isfinite(p->predicted_time_ns);
            c.reasons += !isfinite(p->predicted_time_ns);
        }
        c.timed += n;
        c.models += n > 0;
    }
    return c;
}

/* "N predictions from M models" and, when some model did not apply to some rows, how many. */
static void predictions_text(const struct rp_data *d, char *buf, size_t len)
{
    const struct pred_count c = count_predictions(d);
    int o = snprintf(buf, len, "%lld prediction%s from %d model%s", c.timed,
                     c.timed == 1 ? "" : "s", c.models, c.models == 1 ? "" : "s");
    if (c.reasons && o > 0 && (size_t)o < len)
        snprintf(buf + o, len - (size_t)o,
                 " (and %lld row%s where a model does not apply, with its reason)", c.reasons,
                 c.reasons == 1 ? "" : "s");
}

/* ------------------------------------------------------------------- HTML */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "margin:0 auto;max-width:1400px;padding:0 24px 48px;color:#1d1d1f;background:#fff}"
    "h1{font-size:26px;margin:24px 0 4px}h2{font-size:21px;margin:36px 0 8px;"
    "border-bottom:2px solid #e3e3e3;padding-bottom:4px}h3{font-size:17px;margin:26px 0 6px}"
    ".label{display:inline-block;background:#fff4d6;border:1px solid #e7c46a;border-radius:4px;"
    "padding:4px 10px;font-weight:600;margin:6px 0}"
    ".meta{color:#555;margin:4px 0}.missing{background:#fdecea;border:1px solid #f5b7b1;"
    "border-radius:4px;padding:8px 14px;margin:12px 0}"
    "nav ul{padding-left:18px;margin:6px 0}nav li{margin:1px 0}"
    ".scroll{overflow:auto;max-height:640px;border:1px solid #e3e3e3;margin:8px 0 4px}"
    "table{border-collapse:collapse;font-size:12.5px}th,td{padding:3px 8px;"
    "border-bottom:1px solid #eee;white-space:nowrap;text-align:left}"
    "th{position:sticky;top:0;background:#f5f5f7;border-bottom:1px solid #ccc}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tr:nth-child(even) td{background:#fafafa}"
    "figure{margin:16px 0;max-width:980px}figure svg{width:100%;height:auto;display:block}"
    "tr:target td{background:#fff1a8}tr[id]{scroll-margin-top:32px}svg a{cursor:pointer}"
    ".ov{display:grid;grid-template-columns:repeat(auto-fit,minmax(620px,1fr));gap:0 24px}"
    ".ov figure{max-width:none;margin:8px 0}"
    "figcaption{color:#444;font-size:13px;margin-top:4px}.note{color:#444;max-width:980px}"
    ".files{font-size:12px;color:#666}a{color:#0b62c4}";

/* Added only when the section of several GPUs shows: a flagged cell, a matrix's diagonal, the
 * list of flags above a table. */
static const char css_gpus[] =
    "tr td.flag{background:#fdecea;color:#a40000;font-weight:600}"
    "td.diag{text-align:center;color:#999}"
    ".flags{background:#fff4d6;border:1px solid #e7c46a;border-radius:4px;padding:6px 14px;"
    "margin:8px 0;max-width:980px}.flags ul{margin:4px 0;padding-left:18px}";

/* Is s a number as printed in the csv (then the cell is right-aligned)? */
static int numeric(const char *s)
{
    char *end;
    if (!*s)
        return 0;
    strtod(s, &end);
    return *end == '\0';
}

/* Is every cell of column c of table t that is not empty a number (then it is right-aligned)? */
static int numeric_column(const struct rp_table *t, int c)
{
    int any = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *v = rp_table_csv(t, r, c);
        if (*v && !numeric(v))
            return 0;
        any |= *v != '\0';
    }
    return any;
}

/* The right-aligned columns of the compact tables, by position (td.n in the others). */
static void compact_css(struct rp_buf *b, const struct rp_page *pg)
{
    for (int i = 0; i < pg->ntables; i++) {
        const struct rp_table *t = &pg->tables[i];
        int k = 0;
        if (!t->compact || !t->nrows)
            continue;
        for (int c = 0; c < t->ncols; c++)
            if (numeric_column(t, c))
                rp_buf_printf(b, "%s#%s td:nth-child(%d)", k++ ? "," : "", t->id, c + 1);
        if (k)
            rp_buf_puts(b, "{text-align:right;font-variant-numeric:tabular-nums}");
    }
}

static void html_table(struct rp_buf *b, const struct rp_table *t)
{
    rp_buf_printf(b, "<h3 id=\"t-%s\">", t->id);
    rp_buf_html(b, t->title);
    rp_buf_printf(b, " <span class=\"files\">(%d row%s", t->nrows, t->nrows == 1 ? "" : "s");
    if (t->ncols)
        rp_buf_printf(b, "; <a href=\"csv/%s.csv\">CSV</a>", t->id);
    rp_buf_puts(b, ")</span></h3>\n");
    if (t->note[0]) {
        rp_buf_puts(b, "<p class=\"note\">");
        rp_buf_html(b, t->note);
        rp_buf_puts(b, "</p>\n");
    }
    if (t->nitems) {
        rp_buf_printf(b, "<div class=\"flags\" id=\"%s-items\"><b>", t->id);
        rp_buf_html(b, t->items_title);
        rp_buf_puts(b, "</b><ul>\n");
        for (int i = 0; i < t->nitems; i++) {
            rp_buf_puts(b, "<li>");
            rp_buf_html(b, rp_table_itemtxt(t, i));
            rp_buf_puts(b, "</li>\n");
        }
        rp_buf_puts(b, "</ul></div>\n");
    }
    if (t->ncols == 0 || t->nrows == 0)
        return;
    rp_buf_printf(b, "<div class=\"scroll\"><table id=\"%s\">\n<thead><tr>", t->id);
    for (int c = 0; c < t->ncols; c++) {
        rp_buf_puts(b, "<th>");
        rp_buf_html(b, rp_table_colname(t, c));
        rp_buf_puts(b, "</th>");
    }
    rp_buf_puts(b, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < t->nrows; r++) {
        const char *rid = rp_table_rowid(t, r);
        if (rid) /* a measurement's row: the charts' points link here */
            rp_buf_printf(b, "<tr id=\"%s\">", rid);
        else
            rp_buf_puts(b, "<tr>");
        for (int c = 0; c < t->ncols; c++) {
            const char *s = rp_table_txt(t, r, c), *cls = rp_table_cls(t, r, c);
            const char *style = rp_table_style(t, r, c), *href = rp_table_link(t, r, c);
            int n = !t->compact && numeric(rp_table_csv(t, r, c));
            rp_buf_puts(b, "<td");
            if (n || cls)
                rp_buf_printf(b, " class=\"%s%s%s\"", n ? "n" : "", n && cls ? " " : "",
                              cls ? cls : "");
            if (style) {
                rp_buf_puts(b, " style=\"");
                rp_buf_html(b, style);
                rp_buf_puts(b, "\"");
            }
            rp_buf_puts(b, ">");
            if (href) {
                rp_buf_puts(b, "<a href=\"#");
                rp_buf_html(b, href);
                rp_buf_puts(b, "\">");
            }
            rp_buf_html_text(b, s);
            if (href)
                rp_buf_puts(b, "</a>");
            if (!t->compact) /* a compact table leaves out the optional end tags */
                rp_buf_puts(b, "</td>");
        }
        rp_buf_puts(b, t->compact ? "\n" : "</tr>\n");
    }
    rp_buf_puts(b, "</tbody></table></div>\n");
}

/* Copies an SVG from gnuplot without its prolog, prefixing its ids with pfx: every
 * id="..." attribute and every reference to one (url(#...), href="#..."). A point's link to its
 * table row (href="../index.html#m-ID", marks.c) becomes a link within the page (#m-ID). One
 * pass. */
static void inline_svg(struct rp_buf *b, const char *svg, const char *pfx)
{
    static const char row_link[] = "href=\"../index.html#";
    const char *p = strstr(svg, "<svg"), *run;
    if (!p)
        return;
    for (run = p; *p; p++) {
        size_t hl = 0;
        if (*p == 'h' && strncmp(p, row_link, sizeof row_link - 1) == 0) {
            rp_buf_add(b, run, (size_t)(p - run));
            rp_buf_puts(b, "href=\"#");
            p += sizeof row_link - 2;
            run = p + 1;
            continue;
        }
        if (*p == 'i' && (p[1] == 'd' && p[2] == '=' && (p[3] == '"' || p[3] == '\'')) &&
            (p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t'))
            hl = 4; /* id=" as an attribute name, not xml:id= or grid= */
        else if (*p == 'u' && strncmp(p, "url(#", 5) == 0)
            hl = 5;
        else if (*p == 'h' && strncmp(p, "href=", 5) == 0 && (p[5] == '"' || p[5] == '\'') &&
                 p[6] == '#')
            hl = 7;
        if (!hl)
            continue;
        rp_buf_add(b, run, (size_t)(p - run) + hl);
        rp_buf_printf(b, "%s-", pfx);
        p += hl - 1;
        run = p + 1;
    }
    rp_buf_add(b, run, (size_t)(p - run));
}

static void html_chart(struct rp_buf *b, const struct rp_page *pg, struct rp_out *o,
                       const struct rp_chart *c, int idx)
{
    char rel[160], pfx[24];
    char *svg = NULL;
    size_t len;
    rp_buf_printf(b, "<figure id=\"c-%s\">\n", c->name);
    snprintf(rel, sizeof rel, "plots/%s.svg", c->name);
    snprintf(pfx, sizeof pfx, "c%d", idx);
    if (pg->charts_drawn && rp_read_file(o->dir, rel, &svg, &len) == RK_OK)
        inline_svg(b, svg, pfx);
    else
        rp_buf_printf(b, "<p class=\"missing\">Chart not drawn: %s.</p>\n",
                      pg->charts_why ? pg->charts_why : "no SVG");
    free(svg);
    rp_buf_puts(b, "\n<figcaption><b>");
    rp_buf_html(b, c->title);
    rp_buf_puts(b, ".</b> ");
    rp_buf_html(b, c->caption);
    rp_buf_printf(b,
                  " <span class=\"files\"><a href=\"plots/%s.gp\">script</a> · "
                  "<a href=\"plots/%s.dat\">data</a>",
                  c->name, c->name);
    if (pg->charts_drawn)
        rp_buf_printf(b, " · <a href=\"plots/%s.svg\">SVG</a>", c->name);
    rp_buf_puts(b, "</span></figcaption>\n</figure>\n");
}

/* Section s: its heading, tables and charts. */
static void html_section(struct rp_buf *b, const struct rp_page *pg, struct rp_out *o, int s)
{
    const int by = charts_by_table(s);
    rp_buf_printf(b, "<section id=\"%s\">\n<h2>%s</h2>\n", section_id[s], section_title[s]);
    for (int i = 0; i < pg->ntables; i++) {
        const struct rp_table *t = &pg->tables[i];
        if (t->section != s)
            continue;
        int nc = 0; /* the device's rooflines first: side by side when one per precision */
        for (int c = 0; by < 0 && c < pg->ncharts; c++)
            nc += pg->charts[c].section == s && strcmp(pg->charts[c].family, t->family) == 0;
        if (nc > 1)
            rp_buf_puts(b, "<div class=\"ov\">\n");
        for (int c = 0; by < 0 && c < pg->ncharts; c++)
            if (pg->charts[c].section == s && strcmp(pg->charts[c].family, t->family) == 0)
                html_chart(b, pg, o, &pg->charts[c], c);
        if (nc > 1)
            rp_buf_puts(b, "</div>\n");
        html_table(b, t);
        for (int c = 0; by > 0 && c < pg->ncharts; c++) /* the family's charts under its table */
            if (pg->charts[c].section == s && strcmp(pg->charts[c].family, t->family) == 0)
                html_chart(b, pg, o, &pg->charts[c], c);
    }
    for (int c = 0; !by && c < pg->ncharts; c++)
        if (pg->charts[c].section == s)
            html_chart(b, pg, o, &pg->charts[c], c);
    rp_buf_puts(b, "</section>\n");
}

int rp_write_html(struct rp_out *o, const struct rp_page *pg)
{
    struct rp_buf b = {0};
    const struct rp_data *d = pg->d;
    const char *title = pg->opts && pg->opts->title ? pg->opts->title : "roofkit report";
    const char *miss[8];
    char preds[160];
    int nmiss = missing(pg, miss, 8), rc;

    predictions_text(d, preds, sizeof preds);

    rp_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>");
    rp_buf_html(&b, title);
    rp_buf_printf(&b, "</title>\n<style>%s%s", css, section_shown(pg, RP_SEC_GPUS) ? css_gpus : "");
    compact_css(&b, pg);
    rp_buf_puts(&b, "</style>\n</head>\n<body>\n<header>\n<h1>");
    rp_buf_html(&b, title);
    rp_buf_puts(&b, "</h1>\n");
    if (pg->opts && pg->opts->label && *pg->opts->label) {
        rp_buf_puts(&b, "<p class=\"label\">");
        rp_buf_html(&b, pg->opts->label);
        rp_buf_puts(&b, "</p>\n");
    }
    rp_buf_puts(&b, "<p class=\"meta\">Database <code>");
    rp_buf_html(&b, d->db_path ? d->db_path : "?");
    rp_buf_printf(&b,
                  "</code>: %d device%s, %d measurement%s, %s. "
                  "Generated %s by roofkit " RK_REPORT_VERSION ".</p>\n",
                  d->ndevs, d->ndevs == 1 ? "" : "s", d->nrows, d->nrows == 1 ? "" : "s", preds,
                  pg->generated);
    if (d->selection[0]) {
        rp_buf_puts(&b, "<p class=\"meta\">Selected: ");
        rp_buf_html(&b, d->selection);
        rp_buf_printf(&b, " (%d measurement%s of the database left out).</p>\n", d->n_unselected,
                      d->n_unselected == 1 ? "" : "s");
    }
    if (d->n_tune_caps)
        rp_buf_printf(
            &b,
            "<p class=\"meta\">Left out: %d measurement%s of %d <code>roofkit tune</code> "
            "capture%s (parameter sweeps); each capture's note holds its choices and "
            "regrets (<code>roofkit export --table capture</code>).</p>\n",
            d->n_tune_rows, d->n_tune_rows == 1 ? "" : "s", d->n_tune_caps,
            d->n_tune_caps == 1 ? "" : "s");
    rp_buf_puts(&b, "</header>\n");
    if (nmiss) {
        rp_buf_puts(&b,
                    "<div class=\"missing\" id=\"missing\"><b>Missing from this report</b><ul>\n");
        for (int i = 0; i < nmiss; i++) {
            rp_buf_puts(&b, "<li>");
            rp_buf_html(&b, miss[i]);
            rp_buf_puts(&b, "</li>\n");
        }
        rp_buf_puts(&b, "</ul></div>\n");
    }
    /* the overview first, then the contents of the rest */
    if (section_shown(pg, RP_SEC_OVERVIEW))
        html_section(&b, pg, o, RP_SEC_OVERVIEW);
    rp_buf_puts(&b, "<nav><b>Contents</b><ul>\n");
    for (int s = 0; s < RP_SEC_COUNT; s++) {
        if (!section_shown(pg, s))
            continue;
        rp_buf_printf(&b, "<li><a href=\"#%s\">%s</a><ul>", section_id[s], section_title[s]);
        for (int i = 0; i < pg->ntables; i++)
            if (pg->tables[i].section == s) {
                rp_buf_printf(&b, "<li><a href=\"#t-%s\">", pg->tables[i].id);
                rp_buf_html(&b, pg->tables[i].title);
                rp_buf_puts(&b, "</a></li>");
            }
        rp_buf_puts(&b, "</ul></li>\n");
    }
    rp_buf_puts(&b, "</ul></nav>\n");
    for (int s = 0; s < RP_SEC_COUNT; s++)
        if (s != RP_SEC_OVERVIEW && section_shown(pg, s))
            html_section(&b, pg, o, s);
    rp_buf_puts(&b, "<footer class=\"files\"><p>Charts drawn by gnuplot from the scripts in "
                    "<code>plots/</code> (edit one and run <code>gnuplot NAME.gp</code> there); "
                    "every table as CSV in <code>csv/</code>; the same report in "
                    "<a href=\"report.md\">report.md</a>.</p></footer>\n</body>\n</html>\n");
    if (b.oom) {
        rp_buf_free(&b);
        return rk_error(RK_ENOMEM, "out of memory writing index.html");
    }
    rc = rp_out_write(o, "index.html", b.p, b.len);
    rp_buf_free(&b);
    return rc;
}

/* --------------------------------------------------------------- Markdown */

static void md_cell(struct rp_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            rp_buf_puts(b, "\\|");
        else if (*s == '\n')
            rp_buf_puts(b, " ");
        else
            rp_buf_add(b, s, 1);
    }
}

static void md_table(struct rp_buf *b, const struct rp_table *t)
{
    rp_buf_printf(b, "### %s\n\n", t->title);
    if (t->note[0])
        rp_buf_printf(b, "%s\n\n", t->note);
    if (t->nitems) {
        rp_buf_printf(b, "**%s:**\n\n", t->items_title);
        for (int i = 0; i < t->nitems; i++)
            rp_buf_printf(b, "- %s\n", rp_table_itemtxt(t, i));
        rp_buf_puts(b, "\n");
    }
    if (t->ncols == 0 || t->nrows == 0)
        return;
    for (int c = 0; c < t->ncols; c++) {
        rp_buf_puts(b, "| ");
        md_cell(b, rp_table_colname(t, c));
        rp_buf_puts(b, " ");
    }
    rp_buf_puts(b, "|\n");
    for (int c = 0; c < t->ncols; c++)
        rp_buf_puts(b, numeric(t->nrows ? rp_table_csv(t, 0, c) : "") ? "| ---: " : "| --- ");
    rp_buf_puts(b, "|\n");
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            rp_buf_puts(b, "| ");
            md_cell(b, rp_table_txt(t, r, c));
            rp_buf_puts(b, " ");
        }
        rp_buf_puts(b, "|\n");
    }
    rp_buf_printf(b, "\n(%d row%s; [CSV](csv/%s.csv))\n\n", t->nrows, t->nrows == 1 ? "" : "s",
                  t->id);
}

static void md_chart(struct rp_buf *b, const struct rp_page *pg, const struct rp_chart *c)
{
    if (pg->charts_drawn)
        rp_buf_printf(b, "![%s](plots/%s.svg)\n\n", c->title, c->name);
    rp_buf_printf(b, "*%s.* %s ([script](plots/%s.gp), [data](plots/%s.dat))\n\n", c->title,
                  c->caption, c->name, c->name);
}

int rp_write_md(struct rp_out *o, const struct rp_page *pg)
{
    struct rp_buf b = {0};
    const struct rp_data *d = pg->d;
    const char *miss[8];
    char preds[160];
    int nmiss = missing(pg, miss, 8), rc;

    predictions_text(d, preds, sizeof preds);

    rp_buf_printf(&b, "# %s\n\n", pg->opts && pg->opts->title ? pg->opts->title : "roofkit report");
    if (pg->opts && pg->opts->label && *pg->opts->label)
        rp_buf_printf(&b, "> **%s**\n\n", pg->opts->label);
    rp_buf_printf(&b,
                  "Database `%s`: %d device%s, %d measurement%s, %s. Generated %s by "
                  "roofkit " RK_REPORT_VERSION ".\n\n",
                  d->db_path ? d->db_path : "?", d->ndevs, d->ndevs == 1 ? "" : "s", d->nrows,
                  d->nrows == 1 ? "" : "s", preds, pg->generated);
    if (d->selection[0])
        rp_buf_printf(&b, "Selected: %s (%d measurement%s of the database left out).\n\n",
                      d->selection, d->n_unselected, d->n_unselected == 1 ? "" : "s");
    if (d->n_tune_caps)
        rp_buf_printf(&b,
                      "Left out: %d measurement%s of %d `roofkit tune` capture%s (parameter "
                      "sweeps); each capture's note holds its choices and regrets (`roofkit "
                      "export --table capture`).\n\n",
                      d->n_tune_rows, d->n_tune_rows == 1 ? "" : "s", d->n_tune_caps,
                      d->n_tune_caps == 1 ? "" : "s");
    if (nmiss) {
        rp_buf_puts(&b, "**Missing from this report:**\n\n");
        for (int i = 0; i < nmiss; i++)
            rp_buf_printf(&b, "- %s\n", miss[i]);
        rp_buf_puts(&b, "\n");
    }
    if (pg->ncharts && !pg->charts_drawn)
        rp_buf_printf(&b, "Charts: %s.\n\n", pg->charts_why ? pg->charts_why : "not drawn");
    for (int s = 0; s < RP_SEC_COUNT; s++) { /* the overview first, as in index.html */
        const int by = charts_by_table(s);
        if (!section_shown(pg, s))
            continue;
        rp_buf_printf(&b, "## %s\n\n", section_title[s]);
        for (int i = 0; i < pg->ntables; i++) {
            const struct rp_table *t = &pg->tables[i];
            if (t->section != s)
                continue;
            for (int c = 0; by < 0 && c < pg->ncharts; c++)
                if (pg->charts[c].section == s && strcmp(pg->charts[c].family, t->family) == 0)
                    md_chart(&b, pg, &pg->charts[c]);
            md_table(&b, t);
            for (int c = 0; by > 0 && c < pg->ncharts; c++)
                if (pg->charts[c].section == s && strcmp(pg->charts[c].family, t->family) == 0)
                    md_chart(&b, pg, &pg->charts[c]);
        }
        for (int c = 0; !by && c < pg->ncharts; c++)
            if (pg->charts[c].section == s)
                md_chart(&b, pg, &pg->charts[c]);
    }
    if (b.oom) {
        rp_buf_free(&b);
        return rk_error(RK_ENOMEM, "out of memory writing report.md");
    }
    rc = rp_out_write(o, "report.md", b.p, b.len);
    rp_buf_free(&b);
    return rc;
}

/* -------------------------------------------------------------------- CSV */

static void csv_field(struct rp_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (strpbrk(s, ",\"\r\n") == NULL && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
        rp_buf_add(b, s, n);
        return;
    }
    rp_buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"')
            rp_buf_puts(b, "\"\"");
        else
            rp_buf_add(b, s, 1);
    }
    rp_buf_puts(b, "\"");
}

int rp_write_csv(struct rp_out *o, const struct rp_page *pg)
{
    for (int i = 0; i < pg->ntables; i++) {
        const struct rp_table *t = &pg->tables[i];
        struct rp_buf b = {0};
        char rel[128];
        int rc;
        if (t->ncols == 0)
            continue;
        for (int c = 0; c < t->ncols; c++) {
            if (c)
                rp_buf_puts(&b, ",");
            csv_field(&b, rp_table_colname(t, c));
        }
        rp_buf_puts(&b, "\r\n");
        for (int r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c)
                    rp_buf_puts(&b, ",");
                csv_field(&b, rp_table_csv(t, r, c));
            }
            rp_buf_puts(&b, "\r\n");
        }
        if (b.oom) {
            rp_buf_free(&b);
            return rk_error(RK_ENOMEM, "out of memory writing csv/%s.csv", t->id);
        }
        snprintf(rel, sizeof rel, "csv/%s.csv", t->id);
        rc = rp_out_write(o, rel, b.p, b.len);
        rp_buf_free(&b);
        if (rc != RK_OK)
            return rc;
    }
    return RK_OK;
}
