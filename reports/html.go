package reports

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
)

// htmlTemplate is report.html: one self-contained page, figures inlined as
// PNG data URIs so the file can be mailed or attached as is. Links to run
// manifests and to results.csv/.tex are relative, so they resolve when the
// page is opened inside the experiment directory.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pngURI": func(f *figure) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))
	},
}).Parse(`{{define "table"}}<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Num}} class="num"{{end}}>{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</table>{{end}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.partial { background: #fff4e0; border-left: 4px solid #e69f00; padding: 0.6em 1em; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
td a { color: inherit; text-decoration: none; border-bottom: 1px dotted #999; }
.note { font-size: 0.9em; color: #444; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<table>{{range .Facts}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{if .Partial}}<div class="partial"><strong>Partial report.</strong> The numbers below cover only the data on disk so far:
<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .Notes}}<ul>{{range .Notes}}<li>Note: {{.}}</li>{{end}}</ul>{{end}}
<h2>Results by arm</h2>
{{template "table" .Arms}}
<p class="note">{{.ArmNote}}</p>
<ul>{{range .Files}}<li><a href="{{index . 0}}">{{index . 0}}</a>: {{index . 1}}</li>{{end}}</ul>
{{with .Targets}}<h2>{{.Heading}}</h2>
<p class="note">{{.Intro}}</p>
{{template "table" .Table}}
{{end}}{{with .Pretrain}}<h2>{{.Heading}}</h2>
<p class="note">{{.Intro}}</p>
{{template "table" .Table}}
{{end}}{{with .Tasks}}<h2>{{.Heading}}</h2>
<p class="note">{{.Intro}}</p>
{{template "table" .Table}}
{{end}}{{with .PixelWM}}<h2>{{.Heading}}</h2>
<p class="note">{{.Intro}}</p>
{{template "table" .Table}}
{{range .Images}}<figure><img src="{{index . 1}}" alt="{{index . 0}}"><figcaption>{{index . 0}}</figcaption></figure>
{{end}}{{end}}{{if or .Figures .Skipped}}<h2>Figures</h2>
{{range .Figures}}<figure><img src="{{pngURI .}}" alt="{{.Title}}"><figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .Skipped}}<p>Not drawn, for lack of data:</p>
<ul>{{range .Skipped}}<li>{{.Title}} (<code>{{.Name}}</code>): {{.Reason}}.</li>{{end}}</ul>{{end}}{{end}}
<h2>Runs</h2>
{{range .Runs}}<h3 id="{{.Anchor}}">Runs of arm {{.Arm}}</h3>
{{template "table" .Table}}
{{end}}<h2>Build and hardware</h2>
<p>{{.EnvHeader}}</p>
{{if .Env}}<table>{{range .Env}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>{{end}}
{{if .Deps}}<details><summary>{{len .Deps}} module dependencies</summary>
<table><tr><th>Module</th><th>Version</th></tr>{{range .Deps}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
</details>{{end}}
</body>
</html>
`))

// writeHTML renders the self-contained HTML report.
func writeHTML(w io.Writer, v *reportView) error {
	if err := htmlTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	return nil
}
