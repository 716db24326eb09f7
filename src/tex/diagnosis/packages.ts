// Which package defines which command or environment, written by us as plain data so it is
// easy to read and extend. A name belongs to exactly one entry: when several packages define
// it we list the one whose definition a document most likely meant, and only packages that
// exist in TeX Live. `engines` restricts a package to the compilers it works with.
import type { Compiler } from '../compilers.js';

export interface PackageEntry {
  package: string;
  /** Command names without the backslash. */
  commands?: readonly string[];
  environments?: readonly string[];
  /** Compilers the package works with; absent = all three. */
  engines?: readonly Compiler[];
  /** Options the \usepackage line needs for these names, e.g. `table` for xcolor's \rowcolor. */
  options?: string;
}

const UNICODE_ENGINES: readonly Compiler[] = ['xelatex', 'lualatex'];

export const PACKAGES: readonly PackageEntry[] = [
  {
    package: 'amsmath',
    commands: [
      'text', 'dfrac', 'tfrac', 'binom', 'dbinom', 'tbinom', 'operatorname', 'DeclareMathOperator',
      'eqref', 'intertext', 'substack', 'boldsymbol', 'pmb', 'iint', 'iiint', 'iiiint', 'idotsint',
      'overset', 'underset', 'xrightarrow', 'xleftarrow', 'implies', 'impliedby', 'lvert', 'rvert',
      'lVert', 'rVert', 'numberwithin', 'tag', 'notag', 'allowdisplaybreaks', 'genfrac', 'cfrac',
      'sideset', 'dotsb', 'dotsc', 'dotsi', 'dotsm', 'dotso', 'overleftrightarrow',
      'underleftarrow', 'underrightarrow', 'underleftrightarrow', 'shoveleft', 'shoveright',
      'raisetag', 'smashoperator', 'varinjlim', 'varprojlim', 'varliminf', 'varlimsup', 'injlim',
      'projlim', 'mathring',
    ],
    environments: [
      'align', 'align*', 'gather', 'gather*', 'multline', 'multline*', 'flalign', 'flalign*',
      'alignat', 'alignat*', 'split', 'aligned', 'gathered', 'alignedat', 'cases', 'matrix',
      'pmatrix', 'bmatrix', 'Bmatrix', 'vmatrix', 'Vmatrix', 'smallmatrix', 'subequations',
      'equation*',
    ],
  },
  {
    package: 'amssymb',
    commands: [
      'mathbb', 'mathfrak', 'varnothing', 'nexists', 'therefore', 'because', 'leqslant',
      'geqslant', 'square', 'blacksquare', 'lesssim', 'gtrsim', 'checkmark', 'complement',
      'curlyvee', 'curlywedge', 'lozenge', 'blacklozenge', 'triangleq',
      'nleq', 'ngeq', 'nsubseteq', 'subsetneq', 'supsetneq', 'circledast', 'boxplus', 'boxtimes',
      'Box', 'Diamond', 'mho', 'beth', 'gimel', 'daleth', 'digamma', 'varkappa', 'restriction',
      'twoheadrightarrow', 'twoheadleftarrow', 'rightsquigarrow', 'leftrightarrows', 'rightleftarrows',
      'upharpoonright', 'downharpoonright', 'vDash', 'Vdash', 'nmid', 'nparallel', 'ltimes', 'rtimes',
      'llless', 'gggtr', 'eqslantless', 'eqslantgtr', 'approxeq', 'backsim', 'thicksim', 'thickapprox',
      'ulcorner', 'urcorner', 'llcorner', 'lrcorner', 'intercal', 'smallsetminus', 'hslash',
      'Finv', 'Game', 'eth', 'measuredangle', 'sphericalangle', 'circlearrowleft', 'circlearrowright',
    ],
  },
  { package: 'mathrsfs', commands: ['mathscr'] },
  { package: 'bm', commands: ['bm'] },
  {
    package: 'mathtools',
    commands: [
      'coloneqq', 'eqqcolon', 'Coloneqq', 'coloneq', 'mathclap', 'mathllap', 'mathrlap', 'prescript',
      'DeclarePairedDelimiter', 'DeclarePairedDelimiterX', 'mathtoolsset', 'shortintertext',
      'xmapsto', 'xhookrightarrow', 'xleftrightarrow', 'xLeftarrow', 'xRightarrow', 'adjustlimits',
      'underbracket', 'overbracket', 'vdotswithin', 'splitfrac', 'splitdfrac', 'newtagform',
      'usetagform', 'cramped',
    ],
    environments: ['dcases', 'dcases*', 'rcases', 'multlined', 'pmatrix*', 'bmatrix*', 'psmallmatrix', 'bsmallmatrix'],
  },
  {
    package: 'amsthm',
    commands: ['theoremstyle', 'qedhere', 'qedsymbol', 'newtheoremstyle', 'swapnumbers'],
    environments: ['proof'],
  },
  { package: 'cancel', commands: ['cancel', 'bcancel', 'xcancel', 'cancelto'] },
  { package: 'xfrac', commands: ['sfrac'] },
  { package: 'nicefrac', commands: ['nicefrac'] },
  { package: 'upgreek', commands: ['upalpha', 'upbeta', 'upgamma', 'updelta', 'upmu', 'uppi', 'upsigma', 'uptau', 'upphi', 'upomega'] },
  { package: 'gensymb', commands: ['degree', 'celsius', 'ohm', 'micro', 'perthousand'] },
  { package: 'stmaryrd', commands: ['llbracket', 'rrbracket', 'lightning', 'mapsfrom', 'varoast'] },
  { package: 'wasysym', commands: ['smiley', 'frownie', 'female', 'male', 'permil', 'diameter', 'phone', 'recorder'] },
  { package: 'physics', commands: ['dv', 'pdv', 'abs', 'norm', 'eval', 'order', 'grad', 'curl', 'divergence', 'laplacian', 'mel', 'expval', 'comm', 'acomm', 'Tr', 'rank', 'vb', 'va', 'vu', 'dd', 'tr'] },
  { package: 'braket', commands: ['bra', 'ket', 'braket', 'Bra', 'Ket', 'Braket', 'set', 'Set'] },
  { package: 'siunitx', commands: ['SI', 'si', 'num', 'unit', 'qty', 'qtyrange', 'SIrange', 'numrange', 'ang', 'sisetup', 'qtylist', 'numlist', 'complexnum', 'complexqty', 'tablenum', 'DeclareSIUnit'] },
  { package: 'mhchem', commands: ['ce', 'cee', 'cf', 'mhchemoptions'] },
  { package: 'chemfig', commands: ['chemfig', 'setchemfig', 'chemname', 'schemestart', 'schemestop', 'chemmove'] },
  {
    package: 'graphicx',
    commands: ['includegraphics', 'graphicspath', 'DeclareGraphicsExtensions', 'rotatebox', 'scalebox', 'resizebox', 'reflectbox'],
  },
  {
    package: 'xcolor',
    commands: ['textcolor', 'color', 'colorbox', 'fcolorbox', 'definecolor', 'colorlet', 'pagecolor', 'nopagecolor', 'selectcolormodel', 'definecolorset'],
  },
  { package: 'xcolor', options: 'table', commands: ['rowcolor', 'cellcolor', 'columncolor', 'rowcolors', 'arrayrulecolor'] },
  { package: 'hyperref', commands: ['href', 'hypersetup', 'autoref', 'nameref', 'phantomsection', 'hyperlink', 'hypertarget', 'texorpdfstring', 'pdfbookmark', 'hyperref', 'Autoref'] },
  { package: 'url', commands: ['url', 'urlstyle', 'path', 'DeclareUrlCommand'] },
  { package: 'cleveref', commands: ['cref', 'Cref', 'crefrange', 'Crefrange', 'cpageref', 'Cpageref', 'crefname', 'Crefname', 'labelcref', 'namecref'] },
  { package: 'booktabs', commands: ['toprule', 'midrule', 'bottomrule', 'cmidrule', 'addlinespace', 'specialrule'] },
  { package: 'multirow', commands: ['multirow'] },
  { package: 'makecell', commands: ['makecell', 'thead', 'makegapedcells', 'Xhline', 'Xcline'] },
  { package: 'diagbox', commands: ['diagbox'] },
  { package: 'array', commands: ['newcolumntype', 'firsthline', 'lasthline', 'extrarowheight'] },
  { package: 'hhline', commands: ['hhline'] },
  { package: 'tabularx', environments: ['tabularx'] },
  { package: 'tabulary', environments: ['tabulary'] },
  { package: 'longtable', environments: ['longtable'], commands: ['endhead', 'endfirsthead', 'endfoot', 'endlastfoot'] },
  { package: 'xltabular', environments: ['xltabular'] },
  { package: 'threeparttable', environments: ['threeparttable', 'tablenotes'] },
  { package: 'dcolumn', commands: ['DeclareColumnType'] },
  { package: 'adjustbox', commands: ['adjustbox', 'adjustimage'], environments: ['adjustbox'] },
  {
    package: 'tikz',
    commands: ['tikz', 'usetikzlibrary', 'tikzset', 'tikzstyle', 'pgfmathsetmacro', 'pgfmathparse', 'pgfmathresult', 'pgfkeys', 'pgfdeclarelayer', 'pgfsetlayers', 'foreach', 'tikzexternalize'],
    environments: ['tikzpicture', 'scope', 'pgfonlayer'],
  },
  { package: 'pgfplots', commands: ['pgfplotsset', 'addplot', 'addlegendentry', 'pgfplotstableread', 'pgfplotstabletypeset', 'usepgfplotslibrary'], environments: ['axis', 'semilogxaxis', 'semilogyaxis', 'loglogaxis', 'polaraxis', 'groupplot'] },
  { package: 'tikz-cd', environments: ['tikzcd'] },
  { package: 'circuitikz', environments: ['circuitikz'], commands: ['ctikzset'] },
  { package: 'forest', environments: ['forest'], commands: ['forestset'] },
  { package: 'listings', commands: ['lstinline', 'lstset', 'lstinputlisting', 'lstdefinelanguage', 'lstdefinestyle', 'lstlistoflistings', 'lstnewenvironment'], environments: ['lstlisting'] },
  { package: 'fancyvrb', commands: ['VerbatimInput', 'fvset', 'DefineVerbatimEnvironment', 'Verb'], environments: ['Verbatim', 'BVerbatim', 'LVerbatim'] },
  { package: 'verbatim', commands: ['verbatiminput'], environments: ['comment'] },
  { package: 'algorithm', environments: ['algorithm'], commands: ['listofalgorithms'] },
  {
    package: 'algpseudocode',
    environments: ['algorithmic'],
    commands: ['State', 'Require', 'Ensure', 'If', 'ElsIf', 'Else', 'EndIf', 'For', 'ForAll', 'EndFor', 'While', 'EndWhile', 'Repeat', 'Until', 'Procedure', 'EndProcedure', 'Function', 'EndFunction', 'Return', 'Call', 'Comment', 'algrenewcommand', 'algnewcommand', 'Statex'],
  },
  { package: 'algorithm2e', environments: ['algorithm2e'], commands: ['SetAlgoLined', 'KwData', 'KwResult', 'KwIn', 'KwOut', 'SetKwInOut', 'SetKwFunction', 'DontPrintSemicolon', 'tcp'] },
  { package: 'natbib', commands: ['citep', 'citet', 'citeauthor', 'citeyear', 'citealt', 'citealp', 'citenum', 'citetext', 'Citet', 'Citep', 'setcitestyle', 'bibpunct'] },
  {
    package: 'biblatex',
    commands: ['addbibresource', 'printbibliography', 'autocite', 'textcite', 'parencite', 'footcite', 'fullcite', 'Textcite', 'Parencite', 'Autocite', 'cites', 'supercite', 'printbibheading', 'DeclareFieldFormat', 'smartcite', 'citetitle', 'citedate', 'ExecuteBibliographyOptions'],
    environments: ['refsection', 'refsegment'],
  },
  { package: 'csquotes', commands: ['enquote', 'textquote', 'blockquote', 'MakeOuterQuote', 'foreignquote'], environments: ['displayquote'] },
  { package: 'enumitem', commands: ['setlist', 'newlist', 'setlistdepth', 'SetEnumitemKey'] },
  { package: 'enumitem', options: 'inline', environments: ['enumerate*', 'itemize*', 'description*'] },
  { package: 'geometry', commands: ['geometry', 'newgeometry', 'restoregeometry'] },
  { package: 'fancyhdr', commands: ['fancyhead', 'fancyfoot', 'fancyhf', 'lhead', 'chead', 'rhead', 'lfoot', 'cfoot', 'rfoot', 'fancypagestyle', 'headrulewidth', 'footrulewidth'] },
  { package: 'caption', commands: ['captionsetup', 'captionof', 'DeclareCaptionFormat', 'DeclareCaptionLabelFormat', 'DeclareCaptionFont', 'ContinuedFloat'] },
  { package: 'subcaption', environments: ['subfigure', 'subtable'], commands: ['subcaption', 'subcaptionbox', 'subref'] },
  { package: 'float', commands: ['floatstyle', 'restylefloat', 'newfloat', 'floatname', 'listof'] },
  { package: 'placeins', commands: ['FloatBarrier'] },
  { package: 'wrapfig', environments: ['wrapfigure', 'wraptable'] },
  { package: 'rotating', environments: ['sidewaysfigure', 'sidewaystable', 'turn', 'rotate'] },
  { package: 'pdflscape', environments: ['landscape'] },
  { package: 'multicol', environments: ['multicols', 'multicols*'], commands: ['columnbreak'] },
  { package: 'lipsum', commands: ['lipsum', 'lipsumexp', 'setlipsum'] },
  { package: 'blindtext', commands: ['blindtext', 'Blindtext', 'blinddocument', 'Blinddocument', 'blindlist'] },
  { package: 'setspace', commands: ['setstretch', 'onehalfspacing', 'doublespacing', 'singlespacing'], environments: ['spacing', 'singlespace', 'onehalfspace', 'doublespace'] },
  { package: 'titlesec', commands: ['titleformat', 'titlespacing', 'titlelabel', 'titleclass'] },
  { package: 'tocloft', commands: ['cftsetindents', 'cftpagenumbersoff', 'cftpagenumberson', 'newlistof'] },
  { package: 'appendix', environments: ['appendices', 'subappendices'], commands: ['appendixpage', 'addappheadtotoc'] },
  { package: 'ulem', commands: ['uline', 'uuline', 'uwave', 'sout', 'xout', 'dashuline', 'dotuline'] },
  { package: 'soul', commands: ['hl', 'st', 'ul', 'so', 'caps', 'sethlcolor', 'setul'] },
  { package: 'xspace', commands: ['xspace'] },
  { package: 'todonotes', commands: ['todo', 'missingfigure', 'listoftodos'] },
  { package: 'marginnote', commands: ['marginnote'] },
  { package: 'pdfpages', commands: ['includepdf', 'includepdfset'] },
  { package: 'tcolorbox', commands: ['tcbox', 'newtcolorbox', 'newtcbox', 'tcbuselibrary', 'tcbset', 'tcblower'], environments: ['tcolorbox'] },
  { package: 'mdframed', commands: ['mdfdefinestyle', 'newmdenv', 'mdfsetup'], environments: ['mdframed'] },
  { package: 'framed', environments: ['framed', 'shaded', 'leftbar', 'snugshade'] },
  { package: 'lineno', commands: ['linenumbers', 'nolinenumbers', 'modulolinenumbers'] },
  { package: 'pifont', commands: ['ding', 'dingline', 'dingfill', 'Pisymbol'], environments: ['dingautolist'] },
  { package: 'marvosym', commands: ['Letter', 'Mobilefone', 'Email', 'EUR', 'Lightning', 'Info', 'Telefon'] },
  { package: 'eurosym', commands: ['euro', 'officialeuro'] },
  { package: 'tipa', commands: ['textipa'], environments: ['IPA'] },
  { package: 'newunicodechar', commands: ['newunicodechar'] },
  { package: 'microtype', commands: ['microtypesetup', 'textls', 'lsstyle', 'SetTracking', 'DisableLigatures'] },
  { package: 'footmisc', commands: ['footref'] },
  { package: 'epigraph', commands: ['epigraph'] },
  { package: 'lettrine', commands: ['lettrine'] },
  { package: 'xstring', commands: ['IfSubStr', 'StrLen', 'StrSubstitute', 'IfStrEq', 'StrLeft', 'StrRight'] },
  { package: 'ifthen', commands: ['ifthenelse', 'whiledo', 'newboolean', 'setboolean'] },
  { package: 'etoolbox', commands: ['AtBeginEnvironment', 'AtEndEnvironment', 'apptocmd', 'pretocmd', 'patchcmd', 'ifdefempty', 'newtoggle', 'toggletrue', 'togglefalse', 'iftoggle', 'ifstrequal', 'AtEndPreamble', 'csdef', 'csuse'] },
  { package: 'calc', commands: ['widthof', 'heightof', 'depthof', 'totalheightof', 'settototalheight'] },
  { package: 'datetime2', commands: ['DTMnow', 'DTMdate', 'DTMsetstyle', 'DTMtoday'] },
  { package: 'hologo', commands: ['hologo'] },
  { package: 'fontawesome5', commands: ['faIcon', 'faGithub', 'faEnvelope', 'faLinkedin', 'faPhone', 'faTwitter', 'faGlobe', 'faMapMarker', 'faHome', 'faCheck', 'faTimes', 'faStar'] },
  { package: 'glossaries', commands: ['newglossaryentry', 'gls', 'Gls', 'glspl', 'printglossary', 'printglossaries', 'makeglossaries', 'newacronym', 'acrshort', 'acrlong', 'acrfull'] },
  { package: 'glossaries-extra', commands: ['setabbreviationstyle', 'newabbreviation', 'printunsrtglossary', 'printunsrtglossaries', 'glsxtrshort', 'glsxtrlong', 'glsxtrfull', 'glsxtrnewsymbol', 'glssetcategoryattribute'] },
  { package: 'makeidx', commands: ['printindex', 'seealso'] },
  { package: 'multibib', commands: ['newcites'] },
  // jurabib's own commands; its bibliography style writes the jb… ones into the .bbl.
  { package: 'jurabib', commands: ['jurabibsetup', 'jbbibargs', 'jbdoitem', 'jbdy', 'bibAnnoteFile'] },
  { package: 'doi', commands: ['doi'] },
  { package: 'acronym', environments: ['acronym'], commands: ['ac', 'acs', 'acl', 'acf', 'acp'] },
  { package: 'nomencl', commands: ['nomenclature', 'printnomenclature', 'makenomenclature'] },
  { package: 'comment', commands: ['includecomment', 'excludecomment', 'specialcomment'] },
  { package: 'qrcode', commands: ['qrcode', 'qrset'] },
  { package: 'xeCJK', engines: ['xelatex'], commands: ['setCJKmainfont', 'setCJKsansfont', 'setCJKmonofont', 'xeCJKsetup'] },
  { package: 'fontspec', engines: UNICODE_ENGINES, commands: ['setmainfont', 'setsansfont', 'setmonofont', 'newfontfamily', 'newfontface', 'fontspec', 'addfontfeatures', 'defaultfontfeatures', 'setfontfamily'] },
  { package: 'unicode-math', engines: UNICODE_ENGINES, commands: ['setmathfont', 'symbf', 'symit', 'symup', 'symsf', 'symbb', 'symcal', 'symscr', 'symfrak', 'mathbfit', 'unimathsetup'] },
  { package: 'polyglossia', engines: UNICODE_ENGINES, commands: ['setdefaultlanguage', 'setotherlanguage', 'setotherlanguages', 'setmainlanguage', 'textlang'] },
  { package: 'luacode', engines: ['lualatex'], environments: ['luacode', 'luacode*'], commands: ['luaexec', 'luastring', 'luastringN', 'luastringO'] },
  { package: 'emoji', engines: ['lualatex'], commands: ['emoji', 'setemojifont'] },
  { package: 'babel', commands: ['selectlanguage', 'foreignlanguage', 'babelprovide', 'babelfont', 'babeltags'], environments: ['otherlanguage', 'otherlanguage*', 'hyphenrules'] },
  { package: 'hyphenat', commands: ['hyp', 'nohyphens'] },
  { package: 'changepage', commands: ['changepage'], environments: ['adjustwidth'] },
  { package: 'textpos', environments: ['textblock', 'textblock*'], commands: ['TPGrid', 'textblockorigin'] },
  { package: 'fancybox', commands: ['shadowbox', 'doublebox', 'ovalbox', 'Ovalbox'] },
  { package: 'minted', commands: ['mintinline', 'inputminted', 'setminted', 'newminted', 'usemintedstyle'], environments: ['minted'] },
  { package: 'standalone', commands: ['includestandalone'] },
  { package: 'tabto', commands: ['tabto', 'NumTabs'] },
  { package: 'ragged2e', commands: ['justifying', 'Centering', 'RaggedRight', 'RaggedLeft'], environments: ['FlushLeft', 'FlushRight', 'Center', 'justify'] },
  { package: 'easylist', environments: ['easylist'] },
  { package: 'dirtree', commands: ['dirtree'] },
  { package: 'afterpage', commands: ['afterpage'] },
  { package: 'mathdots', commands: ['iddots'] },
  { package: 'esint', commands: ['oiint', 'oiiint', 'varoint', 'ointctrclockwise', 'sqint'] },
  { package: 'accents', commands: ['accentset', 'underaccent'] },
  { package: 'units', commands: ['unitfrac'] },
  { package: 'empheq', environments: ['empheq'] },
  { package: 'tabstackengine', commands: ['tabularCenterstack'] },
  { package: 'stackengine', commands: ['stackon', 'stackunder', 'stackinset', 'Centerstack'] },
  { package: 'environ', commands: ['NewEnviron'] },
  { package: 'pgfgantt', environments: ['ganttchart'] },
  { package: 'smartdiagram', commands: ['smartdiagram', 'smartdiagramset'] },
  { package: 'bytefield', environments: ['bytefield'], commands: ['bitheader', 'bitbox', 'wordbox'] },
  { package: 'karnaugh-map', environments: ['karnaugh-map'] },
  { package: 'chronology', environments: ['chronology'] },
];

export interface Provider {
  package: string;
  engines?: readonly Compiler[];
  options?: string;
}

function index(kind: 'commands' | 'environments'): ReadonlyMap<string, Provider> {
  const map = new Map<string, Provider>();
  for (const entry of PACKAGES) {
    for (const name of entry[kind] ?? []) {
      if (map.has(name)) continue;
      map.set(name, { package: entry.package, engines: entry.engines, options: entry.options });
    }
  }
  return map;
}

export const COMMAND_PACKAGES = index('commands');
export const ENVIRONMENT_PACKAGES = index('environments');

/** Compilers a package needs, for packages that do not work everywhere. */
export const PACKAGE_ENGINES: Readonly<Record<string, readonly Compiler[]>> = {
  fontspec: UNICODE_ENGINES,
  'unicode-math': UNICODE_ENGINES,
  polyglossia: UNICODE_ENGINES,
  xeCJK: ['xelatex'],
  xltxtra: ['xelatex'],
  xunicode: ['xelatex'],
  luacode: ['lualatex'],
  luatexja: ['lualatex'],
  'luatexja-fontspec': ['lualatex'],
  emoji: ['lualatex'],
  luacolor: ['lualatex'],
  'lua-visual-debug': ['lualatex'],
};

/**
 * Packages that are not installed on this server, with an installed package that covers the
 * usual need and what to change. Only replacements we verified exist in TeX Live.
 */
export const PACKAGE_REPLACEMENTS: Readonly<Record<string, { package?: string; change: string }>> = {
  dsfont: { package: 'amssymb', change: 'write \\mathbb{...} instead of \\mathds{...}' },
  bbm: { package: 'amssymb', change: 'write \\mathbb{...} instead of \\mathbbm{...}' },
  fontawesome: { package: 'marvosym', change: 'replace \\fa... icons with marvosym symbols such as \\Letter or \\Mobilefone, or remove them' },
  fontawesome5: { package: 'marvosym', change: 'replace \\fa... icons with marvosym symbols such as \\Letter or \\Mobilefone, or remove them' },
  libertine: { change: 'the document then uses Latin Modern; for another look use an installed font package such as tgpagella, tgtermes or mathpazo' },
  CJKutf8: { change: 'compile with xelatex and set a font that has the characters with \\setmainfont (fontspec); no CJK font is installed on this server, so such text cannot be typeset here' },
  xeCJK: { change: 'no CJK font is installed on this server, so CJK text cannot be typeset here; remove the CJK text or transliterate it' },
  ctex: { change: 'no CJK font is installed on this server, so CJK text cannot be typeset here; remove the CJK text or transliterate it' },
  epstopdf: { change: 'send figures as png, jpg or pdf and remove the package' },
};
