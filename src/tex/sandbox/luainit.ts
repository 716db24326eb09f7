// Lua that lualatex runs before it reads the document (see engineArgs in job.ts): defence
// in depth behind the host's safe reads. A document cannot make hard or symbolic links
// (lfs.link, lfs.symlink) nor rename files, so it cannot swap a link in for main.log or
// main.pdf. luaotfload and fontspec use none of these: they need lfs.attributes, lfs.dir,
// lfs.mkdir, lfs.touch, lfs.chdir and os.remove for their caches, which stay.
// os.rename is not removed but replaced: LuaTeX-ja (ltj-base.lua) tests whether a cache file
// exists with os.rename(name, name) before removing it, so without os.rename every luatexja,
// ltjsarticle or jlreq document stopped with "attempt to call a nil value (field 'rename')".
// The stand-in answers that question from lfs.attributes and renames nothing; it holds no
// reference to the real function, so debug.getupvalue cannot hand it out.
// The code is passed on TeX's command line, so it avoids characters LaTeX treats specially.
export const LUA_INIT =
  'lfs.link=nil lfs.symlink=nil ' +
  'os.rename=function(from, to) if from == to and lfs.attributes(from) then return true end return nil, "os.rename is disabled" end';
