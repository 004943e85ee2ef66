package highlight

import "strings"

// language is what the lexer knows of one language.
type language struct {
	keywords              map[string]bool
	builtins              map[string]bool // names coloured as functions without a "(" (types, constants)
	lineComments          []string
	blockOpen, blockClose string
	quotes                string
	foldCase              bool // keywords in any case (SQL)
}

func (l *language) fold(word string) string {
	if l.foldCase {
		return strings.ToLower(word)
	}
	return word
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

var (
	goLang = &language{
		keywords: set(`break case chan const continue default defer else fallthrough for func go goto if import interface map
			package range return select struct switch type var nil true false iota`),
		builtins: set(`append cap clear close complex copy delete imag len make max min new panic print println real recover
			any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string
			uint uint8 uint16 uint32 uint64 uintptr`),
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'`",
	}
	jsLang = &language{
		keywords: set(`async await break case catch class const continue debugger default delete do else export extends
			finally for from function if import in instanceof let new of return static super switch this throw try typeof
			var void while with yield null undefined true false as interface type enum implements private protected public
			readonly declare namespace abstract keyof satisfies`),
		builtins:     set(`Array Boolean Date Error JSON Map Math Number Object Promise RegExp Set String Symbol console`),
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'`",
	}
	pyLang = &language{
		keywords: set(`and as assert async await break class continue def del elif else except finally for from global if
			import in is lambda nonlocal not or pass raise return try while with yield None True False match case`),
		builtins:     set(`self cls int str float bool list dict set tuple bytes object type len print range open isinstance`),
		lineComments: []string{"#"}, quotes: "\"'",
	}
	rubyLang = &language{
		keywords: set(`alias and begin break case class def defined do else elsif end ensure false for if in module next nil
			not or redo rescue retry return self super then true undef unless until when while yield require attr_reader
			attr_accessor private protected public`),
		lineComments: []string{"#"}, quotes: "\"'`",
	}
	rustLang = &language{
		keywords: set(`as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod
			move mut pub ref return self Self static struct super trait true type unsafe use where while`),
		builtins:     set(`bool char f32 f64 i8 i16 i32 i64 i128 isize str u8 u16 u32 u64 u128 usize String Vec Option Result Some None Ok Err Box`),
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"",
	}
	cLang = &language{
		keywords: set(`auto break case char const continue default do double else enum extern float for goto if inline int long
			register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
			bool true false NULL nullptr class namespace template typename public private protected virtual override new
			delete this throw try catch using operator friend explicit constexpr noexcept`),
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'",
	}
	javaLang = &language{
		keywords: set(`abstract assert boolean break byte case catch char class const continue default do double else enum
			extends final finally float for goto if implements import instanceof int interface long native new package
			private protected public return short static strictfp super switch synchronized this throw throws transient try
			void volatile while true false null var record fun val when object companion data sealed override open internal
			is in as lateinit suspend init namespace using async await get set readonly string`),
		lineComments: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'",
	}
	shLang = &language{
		keywords: set(`if then else elif fi case esac for select while until do done in function time return exit export
			local readonly declare unset set shift break continue source alias trap eval exec`),
		builtins:     set(`echo printf cd pwd test read`),
		lineComments: []string{"#"}, quotes: "\"'",
	}
	yamlLang = &language{keywords: set(`true false null yes no on off`), lineComments: []string{"#"}, quotes: "\"'"}
	tomlLang = &language{keywords: set(`true false`), lineComments: []string{"#"}, quotes: "\"'"}
	jsonLang = &language{keywords: set(`true false null`), quotes: "\""}
	sqlLang  = &language{
		keywords: set(`select from where and or not insert into values update set delete create table index view drop alter
			add column primary key foreign references join left right inner outer on group by order having limit offset as
			distinct union all case when then else end null is in exists between like begin commit rollback if integer text
			real blob default unique check`),
		lineComments: []string{"--"}, blockOpen: "/*", blockClose: "*/", quotes: "'\"", foldCase: true,
	}
	phpLang = &language{
		keywords: set(`abstract and array as break case catch class clone const continue declare default do echo else elseif
			empty enddeclare endfor endforeach endif endswitch endwhile extends final finally fn for foreach function global
			if implements include instanceof interface isset list match namespace new or print private protected public
			readonly require return static switch throw trait try unset use var while yield true false null`),
		lineComments: []string{"//", "#"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'",
	}
	luaLang = &language{
		keywords:     set(`and break do else elseif end false for function goto if in local nil not or repeat return then true until while`),
		lineComments: []string{"--"}, quotes: "\"'",
	}
	cssLang = &language{
		keywords:  set(`important inherit initial unset none auto`),
		blockOpen: "/*", blockClose: "*/", quotes: "\"'",
	}
	markupLang = &language{blockOpen: "<!--", blockClose: "-->", quotes: "\""}
	makeLang   = &language{keywords: set(`ifeq ifneq ifdef ifndef else endif include define endef export override`), lineComments: []string{"#"}, quotes: "\"'"}
)

// byExt and byName pick a language by a file's extension or whole name.
var (
	byExt = map[string]*language{
		"go": goLang,
		"js": jsLang, "mjs": jsLang, "cjs": jsLang, "jsx": jsLang, "ts": jsLang, "tsx": jsLang, "mts": jsLang, "cts": jsLang,
		"py": pyLang, "pyi": pyLang,
		"rb": rubyLang, "rake": rubyLang,
		"rs": rustLang,
		"c":  cLang, "h": cLang, "cc": cLang, "cpp": cLang, "cxx": cLang, "hpp": cLang, "hh": cLang, "m": cLang,
		"java": javaLang, "kt": javaLang, "kts": javaLang, "scala": javaLang, "cs": javaLang, "swift": javaLang, "dart": javaLang, "groovy": javaLang,
		"sh": shLang, "bash": shLang, "zsh": shLang,
		"yaml": yamlLang, "yml": yamlLang,
		"toml": tomlLang, "ini": tomlLang, "cfg": tomlLang,
		"json": jsonLang, "jsonl": jsonLang,
		"sql": sqlLang,
		"php": phpLang,
		"lua": luaLang,
		"css": cssLang, "scss": cssLang,
		"html": markupLang, "htm": markupLang, "xml": markupLang, "svg": markupLang, "templ": goLang,
		"mk": makeLang,
	}
	byName = map[string]*language{
		"makefile": makeLang, "gnumakefile": makeLang, "dockerfile": shLang, ".bashrc": shLang, ".profile": shLang,
		"gemfile": rubyLang, "rakefile": rubyLang,
	}
)
