// Lua that lualatex runs before it reads the document (see engineArgs in job.ts): defence
// in depth behind the host's safe reads. A document cannot make hard or symbolic links
// (lfs.link, lfs.symlink) nor rename files (os.rename), so it cannot swap a link in for
// main.log or main.pdf. luaotfload and fontspec use none of these: they need lfs.attributes,
// lfs.dir, lfs.mkdir, lfs.touch, lfs.chdir and os.remove for their caches, which stay.
// The code is passed on TeX's command line, so it avoids characters LaTeX treats specially.
export const LUA_INIT = 'lfs.link=nil lfs.symlink=nil os.rename=nil';
