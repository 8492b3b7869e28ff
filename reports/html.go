package reports

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
)

// htmlTemplate is report.html: one self-contained page, figures inlined as
// PNG data URIs so the file can be mailed or attached as is.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pngURI": func(f *figure) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))
	},
}).Parse(`<!DOCTYPE html>
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
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<table>{{range .Facts}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
{{if .Partial}}<div class="partial"><strong>Partial report.</strong> The numbers below cover only the data on disk so far:
<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .Notes}}<ul>{{range .Notes}}<li>Note: {{.}}</li>{{end}}</ul>{{end}}
<h2>Results by arm</h2>
<table><tr>{{range .ArmHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .ArmRows}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{if .Figures}}<h2>Figures</h2>
{{range .Figures}}<figure><img src="{{pngURI .}}" alt="{{.Title}}"><figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{end}}
<h2>Runs</h2>
<table><tr>{{range .RunHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .RunRows}}<tr>{{range $i, $c := .}}<td{{if gt $i 2}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
<h2>Build and hardware</h2>
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
